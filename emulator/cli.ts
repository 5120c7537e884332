import { banner, readFlags, optionsOf, UsageError, USAGE } from './cli-flags';
import { startEmulator } from './index';

async function main(argv: string[]): Promise<void> {
	const flags = readFlags(argv);
	if (flags.help) {
		console.log(USAGE);
		return;
	}
	const emulator = await startEmulator(optionsOf(flags));
	console.log(banner(emulator));
	const shutdown = () => {
		void emulator.close().then(() => process.exit(0));
	};
	process.once('SIGINT', shutdown);
	process.once('SIGTERM', shutdown);
}

main(process.argv.slice(2)).catch((error: unknown) => {
	if (error instanceof UsageError) {
		console.error(`gpu-cloud-emulator: ${error.message}\nRun with --help to see the options.`);
		process.exitCode = 2;
		return;
	}
	console.error(`gpu-cloud-emulator: ${error instanceof Error ? error.message : String(error)}`);
	process.exitCode = 1;
});
