export * from './client';
export * from './settings';
export { PRESIGN_MAX_SECONDS } from './sigv4';
export { signedStorageHeaders } from './request-signing';
