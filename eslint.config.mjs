// n8n's own lint for community nodes (what `n8n-node lint` and n8n's package scanner apply):
// the community-node rules, n8n's node and credential conventions, import checks and no-console.
import { config } from '@n8n/node-cli/eslint';
import tseslint from 'typescript-eslint';

export default tseslint.config(config, {
  // Type information for the rules that need it.
  files: ['nodes/**/*.ts', 'credentials/**/*.ts'],
  languageOptions: {
    parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
  },
});
