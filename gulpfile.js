// Copies what tsc does not emit next to the compiled nodes and credentials: icons, and the
// codex files (*.node.json) that give n8n a node's categories and documentation links.
const { src, dest, parallel } = require('gulp');

function copyNodeAssets() {
	return src(['nodes/**/*.svg', 'nodes/**/*.png', 'nodes/**/*.node.json'], {
		base: '.',
		encoding: false,
	}).pipe(dest('dist'));
}

function copyCredentialIcons() {
	return src(['credentials/**/*.svg', 'credentials/**/*.png'], {
		base: '.',
		encoding: false,
		allowEmpty: true,
	}).pipe(dest('dist'));
}

exports['build:icons'] = parallel(copyNodeAssets, copyCredentialIcons);
