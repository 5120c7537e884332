import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock } from '../../shared/clock';
import type { Container } from './container';
import type { AppServices } from '../features';

export interface TeamContainersOptions {
	/** Answers undefined when the workspace has no installation or no linked organization. */
	build: (team: string) => Promise<Container | undefined>;
	/** Workspaces whose services are kept at most; the least recently used idle one goes first. */
	capacity: number;
	/** A workspace idle this long is released (its timers, clients and caches), rebuilt on its next request. */
	idleMs: number;
	clock: Pick<Clock, 'now'>;
}

interface Kept {
	container: Promise<Container | undefined>;
	usedAt: number;
}

/**
 * The app's services per workspace when it is installed in several: each workspace gets its own
 * container (its bot token, its GPU Cloud organization and key), built from the store on its first
 * request, never ahead of it. A request runs inside its workspace's container; the listeners,
 * registered once, reach it through `services`. Memory follows activity: at most `capacity`
 * containers are kept (least recently used first out) and one idle for `idleMs` is released; a
 * workspace with a request or a job under way is never released.
 */
export class TeamContainers {
	/** In order of use, the least recently used first (a Map keeps insertion order). */
	private readonly kept = new Map<string, Kept>();
	private readonly current = new AsyncLocalStorage<Container>();

	constructor(private readonly options: TeamContainersOptions) {}

	/** The workspace's container, built once while kept; a failed or empty build is tried again next time. */
	get(team: string): Promise<Container | undefined> {
		const now = this.options.clock.now();
		let kept = this.kept.get(team);
		if (kept) this.kept.delete(team);
		else {
			const container = this.options.build(team);
			kept = { container, usedAt: now };
			container.then(
				(built) => built ?? this.dropIfSame(team, container),
				() => this.dropIfSame(team, container),
			);
		}
		kept.usedAt = now;
		this.kept.set(team, kept);
		void this.releaseBeyond(team);
		return kept.container;
	}

	/** After an uninstall or a new link: the next request builds again from the store. */
	async forget(team: string): Promise<void> {
		const kept = this.kept.get(team);
		this.kept.delete(team);
		const container = await kept?.container.catch(() => undefined);
		container?.tracker.stop();
	}

	/** Every container kept now (for idle, drain and stop). */
	async containers(): Promise<Container[]> {
		const all = await Promise.all(
			[...this.kept.values()].map((kept) => kept.container.catch(() => undefined)),
		);
		return all.filter((container): container is Container => container !== undefined);
	}

	/**
	 * Releases the workspaces idle for `idleMs`, and those beyond `capacity` that were busy when it
	 * was passed (called on a timer by the owner).
	 */
	async release(): Promise<void> {
		const cutoff = this.options.clock.now() - this.options.idleMs;
		for (const [team, kept] of [...this.kept]) {
			if (kept.usedAt > cutoff) break;
			await this.releaseIfIdle(team, kept);
		}
		await this.releaseBeyond(undefined);
	}

	run<T>(container: Container, work: () => T): T {
		return this.current.run(container, work);
	}

	/** What the listeners see: the services of the workspace whose request is running. */
	readonly services: AppServices = new Proxy({} as AppServices, {
		get: (_, property) => {
			const container = this.current.getStore();
			if (!container) throw new Error('A listener ran outside a workspace request.');
			return Reflect.get(container.services, property);
		},
	});

	/** Over capacity: the least recently used idle workspaces go (never `using`, asked for just now). */
	private async releaseBeyond(using: string | undefined): Promise<void> {
		let over = this.kept.size - this.options.capacity;
		for (const [team, kept] of [...this.kept]) {
			if (over <= 0) return;
			if (team !== using && (await this.releaseIfIdle(team, kept))) over--;
		}
	}

	/** True when released: built, nothing under way, and not asked for since. */
	private async releaseIfIdle(team: string, kept: Kept): Promise<boolean> {
		const usedAt = kept.usedAt;
		const container = await kept.container.catch(() => undefined);
		if (this.kept.get(team) !== kept || kept.usedAt !== usedAt) return false;
		if (container && (container.lifecycle.inFlight() > 0 || container.tracker.tracking() > 0))
			return false;
		this.kept.delete(team);
		container?.tracker.stop();
		return true;
	}

	private dropIfSame(team: string, container: Promise<Container | undefined>): void {
		if (this.kept.get(team)?.container === container) this.kept.delete(team);
	}
}
