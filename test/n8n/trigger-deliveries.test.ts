import type { IDataObject } from 'n8n-workflow';
import { firstDeliveryInWorkflow } from '../../nodes/GpuCloudTrigger/deliveries';

describe("the trigger's delivery ids in workflow static data", () => {
  const now = 1_800_000_000;

  it('counts an id once, and again only after a day', () => {
    const store: IDataObject = {};
    expect(firstDeliveryInWorkflow(store, 'msg_a', now)).toBe(true);
    expect(firstDeliveryInWorkflow(store, 'msg_a', now + 3_600)).toBe(false);
    expect(firstDeliveryInWorkflow(store, 'msg_a', now + 24 * 3_600 + 1)).toBe(true);
  });

  it('keeps the newest thousand ids, so what n8n saves per delivery stays small', () => {
    const store: IDataObject = {};
    for (let n = 0; n < 1_200; n++) firstDeliveryInWorkflow(store, `msg_${n}`, now + n);
    expect(store.deliveries).toHaveLength(1_000);
    expect(firstDeliveryInWorkflow(store, 'msg_1199', now + 2_000)).toBe(false);
    expect(firstDeliveryInWorkflow(store, 'msg_0', now + 2_000)).toBe(true);
    expect(JSON.stringify(store).length).toBeLessThan(40_000);
  });

  it('starts over from data it cannot read instead of failing the delivery', () => {
    const store: IDataObject = { deliveries: { not: 'a list' } };
    expect(firstDeliveryInWorkflow(store, 'msg_a', now)).toBe(true);
    store.deliveries = [42, 'garbage', `${now} msg_b`];
    expect(firstDeliveryInWorkflow(store, 'msg_b', now)).toBe(false);
    expect(firstDeliveryInWorkflow(store, 'msg_c', now)).toBe(true);
    expect(store.deliveries).toEqual([`${now} msg_b`, `${now} msg_c`]);
  });
});
