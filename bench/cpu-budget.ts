/**
 * A CPU budget for one process, as a container's CPU limit (Kubernetes' `limits.cpu`, Docker's
 * `--cpus`, systemd's `CPUQuota=`) gives each replica of a deployment: the kernel's CFS quota in a
 * cpu cgroup of its own. Needs root and the cpu controller, on cgroup v1 or v2.
 */
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const PERIOD_US = 100_000;
const V1_CPU = '/sys/fs/cgroup/cpu';
const V2_ROOT = '/sys/fs/cgroup';

type Hierarchy = { version: 1; root: string } | { version: 2; root: string };

function hierarchy(): Hierarchy | undefined {
	if (existsSync(join(V1_CPU, 'cpu.cfs_quota_us'))) return { version: 1, root: V1_CPU };
	const controllers = join(V2_ROOT, 'cgroup.controllers');
	if (existsSync(controllers) && readFileSync(controllers, 'utf8').split(/\s+/).includes('cpu'))
		return { version: 2, root: V2_ROOT };
	return undefined;
}

export class CpuBudget {
	private constructor(private readonly dir: string) {}

	/**
	 * Why budgets cannot be made on this machine, or undefined when they can: tried for real, since a
	 * container may show the controller and still refuse a new cgroup.
	 */
	static async unavailable(): Promise<string | undefined> {
		if (process.getuid?.() !== 0) return 'CPU budgets need root (they are cgroups of the kernel)';
		if (!hierarchy())
			return `CPU budgets need the kernel's cpu cgroup controller (${V1_CPU} or cgroup v2's cpu under ${V2_ROOT})`;
		try {
			await (await CpuBudget.create('probe', 1)).remove();
			return undefined;
		} catch (error) {
			return `this machine refused a cpu cgroup (${error instanceof Error ? error.message : String(error)})`;
		}
	}

	/** A budget of `cores` (0.5: half of one core in every period), named for what it holds. */
	static async create(name: string, cores: number): Promise<CpuBudget> {
		const found = hierarchy();
		if (!found) throw new Error(await CpuBudget.unavailable());
		const quotaUs = Math.round(cores * PERIOD_US);
		const dir = join(found.root, `gpu-cloud-bench-${name}-${process.pid}`);
		if (found.version === 2) {
			const subtree = join(found.root, 'cgroup.subtree_control');
			if (!(await readFile(subtree, 'utf8')).split(/\s+/).includes('cpu'))
				await writeFile(subtree, '+cpu');
		}
		await mkdir(dir, { recursive: true });
		try {
			if (found.version === 1) {
				await writeFile(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
				await writeFile(join(dir, 'cpu.cfs_quota_us'), String(quotaUs));
			} else await writeFile(join(dir, 'cpu.max'), `${quotaUs} ${PERIOD_US}`);
		} catch (error) {
			await rmdir(dir);
			throw error;
		}
		return new CpuBudget(dir);
	}

	/** Moves a process, every thread of it, into the budget. */
	add(pid: number): Promise<void> {
		return writeFile(join(this.dir, 'cgroup.procs'), String(pid));
	}

	/** Removes the budget once its processes have exited (the kernel keeps it while any is left). */
	async remove(): Promise<void> {
		for (let attempt = 0; ; attempt++) {
			try {
				return await rmdir(this.dir);
			} catch (error) {
				if (attempt >= 50) throw error;
				await new Promise((resolve) => setTimeout(resolve, 100));
			}
		}
	}
}
