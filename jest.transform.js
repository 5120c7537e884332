// Transpiles TypeScript for jest with esbuild (already installed for tsx): type checking is
// `npm run typecheck`'s job, so tests only need the fastest faithful transpile.
const { transformSync } = require('esbuild');

module.exports = {
	process(source, path) {
		const { code, map } = transformSync(source, {
			loader: path.endsWith('.ts') ? 'ts' : 'js',
			format: 'cjs',
			target: 'es2022',
			sourcemap: 'external',
			sourcefile: path,
			// Jest runs CommonJS: turn import() into require() as ts-jest and swc do.
			supported: { 'dynamic-import': false },
		});
		return { code, map };
	},
};
