// Imported first by the harness: n8n-core reads these when its services start, and writes its
// instance settings file into N8N_USER_FOLDER, which must not be the developer's own.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.N8N_USER_FOLDER = mkdtempSync(join(tmpdir(), 'n8n-harness-'));
process.env.N8N_DIAGNOSTICS_ENABLED = 'false';
process.env.N8N_VERSION_NOTIFICATIONS_ENABLED = 'false';
