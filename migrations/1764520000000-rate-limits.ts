import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The counters of the rate limits (rate-limiter-flexible's PostgreSQL layout), shared by every process. */
export class RateLimits1764520000000 implements MigrationInterface {
  name = 'RateLimits1764520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('CREATE TABLE rate_limits (key varchar(255) PRIMARY KEY, points integer NOT NULL DEFAULT 0, expire bigint)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE rate_limits');
  }
}
