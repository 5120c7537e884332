import { readdir, readFile } from 'node:fs/promises';

/**
 * Processes as Linux's /proc shows them: for the tests and benchmarks that follow a program's own
 * children (n8n's task runners, nginx's workers) or measure its CPU time.
 */

/**
 * The fields of /proc/<pid>/stat after the command name (which may hold spaces and parentheses), so
 * index 0 is the state, 1 the parent's pid, 11 and 12 user and system time in ticks; undefined once
 * the process has gone.
 */
export async function procStat(pid: number): Promise<string[] | undefined> {
	try {
		const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
		return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
	} catch (error) {
		if (
			error instanceof Error &&
			'code' in error &&
			['ENOENT', 'ESRCH'].includes(String(error.code))
		)
			return undefined;
		throw error;
	}
}

/** CPU seconds (user and system) the process has used so far; 0 once it has gone. */
export async function cpuSeconds(pid: number): Promise<number> {
	const fields = await procStat(pid);
	return fields ? (Number(fields[11]) + Number(fields[12])) / 100 : 0;
}

/** Every process below `root`: its children, theirs, and so on. */
export async function descendants(root: number): Promise<number[]> {
	const parentOf = new Map<number, number>();
	for (const entry of await readdir('/proc')) {
		if (!/^\d+$/.test(entry)) continue;
		const ppid = Number((await procStat(Number(entry)))?.[1]);
		if (ppid) parentOf.set(Number(entry), ppid);
	}
	const found: number[] = [];
	for (let added = true; added; ) {
		added = false;
		for (const [pid, ppid] of parentOf)
			if ((ppid === root || found.includes(ppid)) && !found.includes(pid)) {
				found.push(pid);
				added = true;
			}
	}
	return found;
}
