import { AsyncLocalStorage } from 'node:async_hooks';
import type { Container } from './container';
import type { AppServices } from '../features';

/**
 * The app's services per workspace when it is installed in several: each workspace gets its own
 * container (its bot token, its GPU Cloud organization and key), built on its first request and
 * kept. A request runs inside its workspace's container; the listeners, registered once, reach it
 * through `services`.
 */
export class TeamContainers {
	private readonly built = new Map<string, Promise<Container | undefined>>();
	private readonly current = new AsyncLocalStorage<Container>();

	/** `build` answers undefined when the workspace has no installation or no linked organization. */
	constructor(private readonly build: (team: string) => Promise<Container | undefined>) {}

	/** The workspace's container, built once; a failed or empty build is tried again next time. */
	get(team: string): Promise<Container | undefined> {
		let container = this.built.get(team);
		if (!container) {
			container = this.build(team);
			this.built.set(team, container);
			container.then(
				(built) => built ?? this.built.delete(team),
				() => this.built.delete(team),
			);
		}
		return container;
	}

	/** After an uninstall or a new link: the next request builds again from the store. */
	async forget(team: string): Promise<void> {
		const container = await this.built.get(team)?.catch(() => undefined);
		this.built.delete(team);
		container?.tracker.stop();
	}

	/** Every container built so far (for idle, drain and stop). */
	async containers(): Promise<Container[]> {
		const all = await Promise.all(
			[...this.built.values()].map((built) => built.catch(() => undefined)),
		);
		return all.filter((container): container is Container => container !== undefined);
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
}
