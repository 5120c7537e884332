import type { IDataObject } from 'n8n-workflow';
import { DeliveryRecord } from '../../nodes/GpuCloudTrigger/deliveries';

describe("the trigger's record of delivery ids", () => {
	const now = 1_800_000_000;

	it('counts an id once, and again only after a day', () => {
		const record = new DeliveryRecord();
		const store: IDataObject = {};
		expect(record.firstDelivery(store, 'msg_a', now)).toBe(true);
		expect(record.firstDelivery(store, 'msg_a', now + 3_600)).toBe(false);
		expect(new DeliveryRecord().firstDelivery(store, 'msg_a', now + 3_600)).toBe(false);
		expect(new DeliveryRecord().firstDelivery(store, 'msg_a', now + 24 * 3_600 + 1)).toBe(true);
	});

	it('keeps the newest thousand ids, so what n8n saves per delivery stays small', () => {
		const record = new DeliveryRecord();
		const store: IDataObject = {};
		for (let n = 0; n < 1_200; n++) record.firstDelivery(store, `msg_${n}`, now + n);
		expect(store.deliveries).toHaveLength(1_000);
		expect(new DeliveryRecord().firstDelivery(store, 'msg_1199', now + 2_000)).toBe(false);
		expect(new DeliveryRecord().firstDelivery(store, 'msg_0', now + 2_000)).toBe(true);
		expect(JSON.stringify(store).length).toBeLessThan(40_000);
	});

	it('writes back the ids a simultaneous save of another process overwrote, with its next delivery', () => {
		const [processA, processB] = [new DeliveryRecord(), new DeliveryRecord()];
		// Both read the same saved record; B saves last, so A's id is lost from the database.
		const readByA: IDataObject = {};
		const readByB: IDataObject = {};
		expect(processA.firstDelivery(readByA, 'msg_a', now)).toBe(true);
		expect(processB.firstDelivery(readByB, 'msg_b', now)).toBe(true);
		let database = JSON.stringify(readByB);
		// A's next delivery (here a repeat of B's) restores its own id.
		const next = JSON.parse(database) as IDataObject;
		expect(processA.firstDelivery(next, 'msg_b', now + 1)).toBe(false);
		database = JSON.stringify(next);
		expect(
			new DeliveryRecord().firstDelivery(JSON.parse(database) as IDataObject, 'msg_a', now + 2),
		).toBe(false);
	});

	it('starts over from data it cannot read instead of failing the delivery', () => {
		const record = new DeliveryRecord();
		const store: IDataObject = { deliveries: { not: 'a list' } };
		expect(record.firstDelivery(store, 'msg_a', now)).toBe(true);
		store.deliveries = [42, 'garbage', `${now} msg_b`];
		expect(new DeliveryRecord().firstDelivery(store, 'msg_b', now)).toBe(false);
	});
});
