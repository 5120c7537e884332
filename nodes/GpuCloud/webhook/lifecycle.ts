import type { IHookFunctions } from 'n8n-workflow';

/**
 * The webhook lifecycle of both nodes. GPU Cloud has no API to register webhooks: each job carries
 * its own webhook URL (a trigger's URL, or the resume URL of a paused execution, which n8n serves
 * itself), so there is nothing to create, check or delete when a workflow is (de)activated.
 */
export const nothingToRegister = {
	async checkExists(this: IHookFunctions): Promise<boolean> {
		return true;
	},
	async create(this: IHookFunctions): Promise<boolean> {
		return true;
	},
	async delete(this: IHookFunctions): Promise<boolean> {
		return true;
	},
};
