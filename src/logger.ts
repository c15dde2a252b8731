import pino from 'pino';
import type { LogLevel } from './config';

export type Logger = pino.Logger;

export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    redact: { paths: ['apiKey', '*.apiKey', 'authorization', '*.authorization', 'req.headers.authorization'], censor: '[redacted]' },
  });
}
