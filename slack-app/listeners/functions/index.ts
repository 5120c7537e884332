import type { App } from '@slack/bolt';
import type { AppServices } from '../../features';
import { askModelStep } from './ask-model';
import { generateImageStep } from './generate-image';
import { runGpuJobStep } from './run-gpu-job';
import { transcribeFileStep } from './transcribe-file';

/** Workflow Builder steps (manifest.yaml's `functions`), by callback id. */
export const STEPS = {
	runGpuJob: 'run_gpu_job',
	transcribeFile: 'transcribe_file',
	askModel: 'ask_model',
	generateImage: 'generate_image',
} as const;

export function registerFunctions(app: App, services: AppServices): void {
	app.function(STEPS.runGpuJob, runGpuJobStep(services));
	app.function(STEPS.transcribeFile, transcribeFileStep(services));
	app.function(STEPS.askModel, askModelStep(services));
	app.function(STEPS.generateImage, generateImageStep(services));
}
