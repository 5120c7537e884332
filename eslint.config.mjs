// One lint over every folder. The n8n package (nodes/, credentials/, package.json) gets n8n's own
// community-node rules (what `n8n-node lint` and n8n's package scanner apply); everything else gets
// typescript-eslint's recommended rules with type information.
import js from '@eslint/js';
import globals from 'globals';
import { config as n8nCommunityNodes } from '@n8n/node-cli/eslint';
import tseslint from 'typescript-eslint';

const typeInformation = {
	parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
};
const n8nSources = ['nodes/**/*.ts', 'credentials/**/*.ts'];

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
