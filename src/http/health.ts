import type { DataSource } from 'typeorm';
import type { Services } from '../services';

export interface Readiness {
  status: 'ready' | 'unavailable';
  database: 'up' | 'down';
  queue: 'up' | 'down';
  events: 'up' | 'down';
}

const within = <T>(promise: Promise<T>, ms: number): Promise<T> =>
  Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref())]);

/**
 * Ready to serve: the database answers, the job queue's tables can be read, and the LISTEN
 * connection that carries events between processes is up. Each check has 2 s.
 */
export async function readiness(dataSource: DataSource, services: Pick<Services, 'queue' | 'bus'>): Promise<Readiness> {
  const [database, queue] = await Promise.all([
    within(dataSource.query('SELECT 1'), 2000).then(() => 'up' as const, () => 'down' as const),
    within(services.queue.depth(), 2000).then(() => 'up' as const, () => 'down' as const),
  ]);
  const events = services.bus.listening ? 'up' : 'down';
  const ready = database === 'up' && queue === 'up' && events === 'up';
  return { status: ready ? 'ready' : 'unavailable', database, queue, events };
}
