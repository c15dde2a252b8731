import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from './config';
import type { Logger } from './logger';

/**
 * The key that encrypts endpoint API keys at rest. SECRET_KEY wins; otherwise one is generated
 * once into DATA_DIR, which is right for a single machine but not for processes on several
 * machines sharing a database (they must share SECRET_KEY).
 */
export function resolveSecretKey(config: Config, logger: Logger): string {
  if (config.secretKey) return config.secretKey;
  const file = path.join(config.dataDir, 'secret-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  writeFileSync(file, key, { mode: 0o600 });
  if (config.databaseUrl) {
    logger.warn({ file }, 'SECRET_KEY is unset: generated one in DATA_DIR; set SECRET_KEY when several processes share the database');
  }
  return key;
}
