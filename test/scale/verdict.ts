/**
 * The verdict of `npm run test:scale`: the goals its scenarios check, and the run of those scenarios
 * that always ends in a verdict (a `--no-bulk` run skips the bulk scenarios, not the verdict).
 */

export interface Check {
	name: string;
	value: string;
	met: boolean;
}

export class Goals {
	readonly checks: Check[] = [];
	constructor(private readonly log: (line: string) => void) {}

	check(name: string, value: string, met: boolean): void {
		this.checks.push({ name, value, met });
		this.log(`${met ? 'ok  ' : 'FAIL'} ${name}: ${value}`);
	}

	/** The exit code: 1 when a goal was missed or none was checked (a run that measured nothing). */
	verdict(): number {
		const failed = this.checks.filter((entry) => !entry.met);
		this.log(`${this.checks.length - failed.length} of ${this.checks.length} goals met`);
		return failed.length || this.checks.length === 0 ? 1 : 0;
	}
}

export interface Scenario {
	name: string;
	/** Part of the bulk runs, which `--no-bulk` leaves out. */
	bulk?: boolean;
	run: () => Promise<void>;
}

/** Runs the scenarios in order and answers the exit code; a scenario that throws rejects. */
export async function runScenarios(
	scenarios: Scenario[],
	{ bulk }: { bulk: boolean },
	goals: Goals,
): Promise<number> {
	// Skipped scenarios are passed over, never returned from: the verdict below must always run.
	for (const scenario of scenarios) if (!scenario.bulk || bulk) await scenario.run();
	return goals.verdict();
}
