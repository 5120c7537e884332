/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	transform: { '^.+\\.ts$': '<rootDir>/jest.transform.js' },
	// Two cores: keep one free for the emulator servers the tests start.
	maxWorkers: 2,
	testTimeout: 30000,
};
