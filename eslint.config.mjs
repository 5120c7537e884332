// One lint over every folder. The n8n package (nodes/, credentials/, package.json) gets n8n's own
// community-node rules (what `n8n-node lint` and n8n's package scanner apply); everything else gets
// typescript-eslint's recommended rules with type information.
import js from '@eslint/js';
import globals from 'globals';
import { config as n8nCommunityNodes } from '@n8n/node-cli/eslint';
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';

const typeInformation = {
	parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
};
const n8nSources = ['nodes/**/*.ts', 'credentials/**/*.ts'];
// n8n's config registers import-x for the nodes; ESLint accepts a plugin twice only as the same object.
const importXPlugin =
	[n8nCommunityNodes].flat().find((entry) => entry.plugins?.['import-x'])?.plugins['import-x'] ??
	importX;
const allSources = [
	'shared/**/*.ts',
	'emulator/**/*.ts',
	'slack-app/**/*.ts',
	'slack-standin/**/*.ts',
	...n8nSources,
	'test/**/*.ts',
	'bench/**/*.ts',
];

// The Slack app's folders, top to bottom (docs/architecture.md): each may import only what is below it.
const app = (path) => `./slack-app/${path}`;
const ENTRY = [
	'app.ts',
	'bin.ts',
	'start.ts',
	'serve.ts',
	'local.ts',
	'pack.ts',
	'emulator-process.ts',
].map(app);
const below = (layer, above) => ({
	target: app(layer),
	from: above,
	message: `slack-app/${layer}/ sits below these; see the Slack app's folders in docs/architecture.md.`,
});
// Between the entry files and the leaves (messages/, model/), top to bottom.
const LAYERS = ['workspaces', 'listeners', 'features', 'requests', 'http', 'state', 'slack'];
// What sits above a layer: the entry, every layer higher up, and config.ts from the workspaces down.
const above = (index) => [
	...ENTRY,
	...(index > 0 ? [app('config.ts')] : []),
	...LAYERS.slice(0, index).map(app),
];
const layering = [
	{
		target: app('messages'),
		from: './slack-app',
		except: ['./messages', './model'],
		message: 'messages/ is a leaf: it imports only the model.',
	},
	{
		target: app('model'),
		from: './slack-app',
		except: ['./model'],
		message: 'model/ is a leaf: it imports nothing else of the app.',
	},
	...LAYERS.map((layer, index) => below(layer, above(index))),
	{
		// The packed app is bin.ts and what it imports: only the local runner may start the stand-in.
		target: './slack-app',
		from: ['./slack-standin', './emulator'],
		except: [],
		message:
			'Only slack-app/start.ts and slack-app/local.ts may reach the stand-in or the emulator.',
	},
	{
		target: './shared',
		from: ['./slack-app', './slack-standin', './nodes', './credentials', './emulator'],
		message: 'shared/ is the core both products use: it imports neither of them.',
	},
];

export default tseslint.config(
	{
		ignores: ['**/dist/**', '**/node_modules/**', 'coverage/**', '.n8n-home/**', 'demo-output/**'],
	},
	// n8n's config is written for a package of nodes only: its TypeScript rules are narrowed to them.
	...[n8nCommunityNodes]
		.flat()
		.map((entry) =>
			entry.files?.length === 1 && entry.files[0] === '**/*.ts'
				? { ...entry, files: n8nSources }
				: entry,
		),
	{ files: n8nSources, languageOptions: typeInformation },
	{
		files: [
			'shared/**/*.ts',
			'emulator/**/*.ts',
			'slack-app/**/*.ts',
			'slack-standin/**/*.ts',
			'test/**/*.ts',
			'bench/**/*.ts',
		],
		extends: [js.configs.recommended, ...tseslint.configs.recommended],
		languageOptions: typeInformation,
		rules: {
			// A leading underscore marks a value taken only to be left out (e.g. `{ secret: _, ...rest }`).
			'@typescript-eslint/no-unused-vars': [
				'error',
				{ argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
			],
		},
	},
	{
		files: allSources,
		plugins: { 'import-x': importXPlugin },
		settings: {
			'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.json'] })],
			// Which files import-x reads to follow imports (no-cycle); its default is JavaScript only.
			'import-x/extensions': ['.ts', '.js'],
		},
		rules: {
			'import-x/no-cycle': 'error',
			'import-x/no-restricted-paths': ['error', { zones: layering }],
		},
	},
	{
		// The local runner composes the app with its stand-ins; the packed app never imports it.
		files: ['slack-app/start.ts', 'slack-app/local.ts', 'slack-app/emulator-process.ts'],
		rules: {
			'import-x/no-restricted-paths': [
				'error',
				{ zones: layering.filter((zone) => zone.target !== './slack-app') },
			],
		},
	},
	{
		files: ['shared/**/*.ts'],
		rules: {
			'no-restricted-imports': [
				'error',
				{
					patterns: [
						{
							group: ['n8n-workflow', 'n8n-core', 'n8n', '@n8n/*', '@slack/*'],
							message: 'shared/ never imports n8n or Slack code.',
						},
					],
				},
			],
		},
	},
	{
		// Loads the built package the way n8n does (require, against a chosen n8n-workflow) and hands its
		// exports to Reflect.construct, whose parameter type is `Function`.
		files: ['test/n8n/dist-probe.ts'],
		rules: {
			'@typescript-eslint/no-require-imports': 'off',
			'@typescript-eslint/no-unsafe-function-type': 'off',
		},
	},
	{
		files: ['*.js', 'emulator/**/*.js'],
		extends: [js.configs.recommended],
		languageOptions: { sourceType: 'commonjs', globals: globals.node },
	},
	{
		files: ['*.mjs'],
		extends: [js.configs.recommended],
		languageOptions: { globals: globals.node },
	},
);
