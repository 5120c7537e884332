import { Goals, runScenarios, type Scenario } from './verdict';

// The scale run needs n8n, PostgreSQL and Redis; its verdict does not, so it is checked here.
describe('the scale run’s verdict', () => {
	function scenarios(goals: Goals, ran: string[]): Scenario[] {
		return [
			{
				name: 'trigger',
				run: async () => {
					ran.push('trigger');
					goals.check('trigger: runs per job', '1 2 1', false);
				},
			},
			{
				name: 'bulk',
				bulk: true,
				run: async () => {
					ran.push('bulk');
					goals.check('bulk: 429s', '0.5 %', true);
				},
			},
			{
				name: 'after the bulk runs',
				run: async () => {
					ran.push('after');
					goals.check('image: read back', 'as expected', true);
				},
			},
		];
	}

	it('exits non-zero on a missed goal when --no-bulk leaves the bulk runs out', async () => {
		const lines: string[] = [];
		const goals = new Goals((line) => lines.push(line));
		const ran: string[] = [];
		expect(await runScenarios(scenarios(goals, ran), { bulk: false }, goals)).toBe(1);
		expect(ran).toEqual(['trigger', 'after']);
		expect(lines).toContain('1 of 2 goals met');
	});

	it('exits non-zero on a missed goal with the bulk runs', async () => {
		const goals = new Goals(() => undefined);
		const ran: string[] = [];
		expect(await runScenarios(scenarios(goals, ran), { bulk: true }, goals)).toBe(1);
		expect(ran).toEqual(['trigger', 'bulk', 'after']);
	});

	it('exits zero only when every goal checked was met', async () => {
		const goals = new Goals(() => undefined);
		const met: Scenario = { name: 'met', run: async () => goals.check('a', 'b', true) };
		expect(await runScenarios([met], { bulk: false }, goals)).toBe(0);
	});

	it('exits non-zero when no goal was checked', async () => {
		const goals = new Goals(() => undefined);
		const bulkOnly: Scenario = {
			name: 'bulk',
			bulk: true,
			run: async () => goals.check('a', 'b', true),
		};
		expect(await runScenarios([bulkOnly], { bulk: false }, goals)).toBe(1);
	});

	it('rejects when a scenario throws', async () => {
		const goals = new Goals(() => undefined);
		const broken: Scenario = {
			name: 'broken',
			run: async () => {
				throw new Error('the cluster did not start');
			},
		};
		await expect(runScenarios([broken], { bulk: true }, goals)).rejects.toThrow(
			'the cluster did not start',
		);
	});
});
