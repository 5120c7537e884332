import { z } from 'zod/v4';
import { LIMITS, dateTimeSchema, resourceNameSchema, uuidSchema } from './common';

const nameValue = z.looseObject({ name: z.string(), value: z.string() });
const int = z.number().int();

const probeSchema = z.looseObject({
	exec: z.looseObject({ command: z.array(z.string()) }).optional(),
	grpc: z.looseObject({ port: int, service: z.string() }).optional(),
	http: z
		.looseObject({
			headers: z.array(nameValue).optional(),
			path: z.string(),
			port: int,
			scheme: z.string().optional(),
		})
		.optional(),
	tcp: z.looseObject({ port: int }).optional(),
	failure_threshold: int.optional(),
	initial_delay_seconds: int.optional(),
	period_seconds: int.optional(),
	success_threshold: int.optional(),
	timeout_seconds: int.optional(),
});

const loggingSchema = z.looseObject({
	provider_one: z
		.looseObject({ host: z.string(), api_token: z.string(), dataset: z.string() })
		.optional(),
	provider_two: z
		.looseObject({ host: z.string(), api_key: z.string(), tags: z.array(nameValue).optional() })
		.optional(),
	http: z
		.looseObject({
			host: z.string(),
			port: int,
			user: z.string().optional(),
			password: z.string().optional(),
			path: z.string().optional(),
			format: z.string(),
			headers: z.array(nameValue).optional(),
			compression: z.string(),
		})
		.optional(),
	provider_three: z.looseObject({ host: z.string(), ingestion_key: z.string() }).optional(),
	provider_four: z.looseObject({ host: z.string(), token: z.string() }).optional(),
	tcp: z.looseObject({ host: z.string(), port: int }).optional(),
});

export const containerGroupSchema = z.looseObject({
	id: uuidSchema,
	name: z.string(),
	display_name: z.string().optional(),
	organization_name: z.string().optional(),
	project_name: z.string().optional(),
	autostart_policy: z.boolean().optional(),
	country_codes: z.array(z.string()).optional(),
	create_time: dateTimeSchema.optional(),
	update_time: dateTimeSchema.optional(),
	pending_change: z.boolean().optional(),
	priority: z.string().optional(),
	readme: z.string().optional(),
	replicas: int.min(0).optional(),
	restart_policy: z.string().optional(),
	version: int.optional(),
	container: z
		.looseObject({
			command: z.array(z.string()).nullable().optional(),
			environment_variables: z.record(z.string(), z.string()).optional(),
			hash: z.string().optional(),
			image: z.string(),
			image_caching: z.boolean().optional(),
			size: int.optional(),
			resources: z
				.looseObject({
					cpu: int,
					memory: int,
					gpu_classes: z.array(uuidSchema).optional(),
					storage_amount: int.optional(),
					shm_size: int.optional(),
				})
				.optional(),
			logging: loggingSchema.optional(),
		})
		.optional(),
	current_state: z
		.looseObject({
			description: z.string().optional(),
			start_time: dateTimeSchema.optional(),
			finish_time: dateTimeSchema.optional(),
			status: z.string(),
			instance_status_counts: z
				.looseObject({
					allocating_count: int,
					creating_count: int,
					running_count: int,
					stopping_count: int,
				})
				.optional(),
		})
		.optional(),
	networking: z
		.looseObject({
			auth: z.boolean(),
			client_request_timeout: int.optional(),
			server_response_timeout: int.optional(),
			dns: z.string().optional(),
			load_balancer: z.string().optional(),
			port: int,
			protocol: z.string(),
			single_connection_limit: z.boolean().optional(),
		})
		.optional(),
	queue_autoscaler: z
		.looseObject({
			desired_queue_length: int,
			min_replicas: int,
			max_replicas: int,
			max_downscale_per_minute: int.optional(),
			max_upscale_per_minute: int.optional(),
			polling_period: int.optional(),
		})
		.optional(),
	queue_connection: z
		.looseObject({ path: z.string(), port: int, queue_name: z.string() })
		.optional(),
	liveness_probe: probeSchema.optional(),
	readiness_probe: probeSchema.optional(),
	startup_probe: probeSchema.optional(),
});
export type ContainerGroup = z.infer<typeof containerGroupSchema>;

const displayNameSchema = z
	.string({ error: 'must be a text value' })
	.min(LIMITS.nameMinLength, {
		error: `must be ${LIMITS.nameMinLength}-${LIMITS.displayNameMaxLength} characters`,
	})
	.max(LIMITS.displayNameMaxLength, {
		error: `must be ${LIMITS.nameMinLength}-${LIMITS.displayNameMaxLength} characters`,
	});

const descriptionSchema = z
	.string({ error: 'must be a text value' })
	.max(LIMITS.queueDescriptionMaxLength, {
		error: `must be at most ${LIMITS.queueDescriptionMaxLength} characters`,
	});

export const queueSchema = z.looseObject({
	id: uuidSchema,
	name: resourceNameSchema,
	display_name: displayNameSchema,
	description: descriptionSchema.optional(),
	container_groups: z.array(containerGroupSchema).max(LIMITS.containerGroupsMax),
	create_time: dateTimeSchema,
	update_time: dateTimeSchema,
	current_queue_length: z.number().int().min(0).optional(),
});
export type Queue = z.infer<typeof queueSchema>;

export const createQueueRequestSchema = z.strictObject({
	name: resourceNameSchema,
	display_name: displayNameSchema.optional(),
	description: descriptionSchema.optional(),
});
export type CreateQueueRequest = z.infer<typeof createQueueRequestSchema>;
