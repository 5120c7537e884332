#!/usr/bin/env node
// Runs the TypeScript CLI directly: the emulator is a development tool and ships no build step.
require('tsx/cjs');
require('../cli.ts');
