import type { BootstrapGridResult, GridRun, GridVariable, MultiplicityMatrix } from '../../analytics/bootstrap';
import { concatGrids } from './chunked';
import type { StatisticsEngine } from './statistics-engine';

/** A prediction cell that conditional scoring keeps: present and not INVALID. */
export function isValidCell(cell: { status: string } | null | undefined): boolean {
  return cell !== undefined && cell !== null && cell.status !== 'INVALID';
}

/**
 * The grids of a computation's slices of runs on one set of resamples, computed by the
 * statistics engine while the next slices are prepared: at most `parallelism` at once, so that
 * a slice's inputs are not all built before the first grid starts. `all` puts them together in
 * the order they were added.
 */
export class GridJobs {
  private readonly grids: Promise<BootstrapGridResult>[] = [];
  private readonly computing = new Set<Promise<void>>();
  private readonly parallelism: number;
  /** The first grid that failed: nothing more is started after it. */
  private failure: unknown = null;

  constructor(
    private readonly engine: StatisticsEngine,
    private readonly multiplicities: MultiplicityMatrix,
    private readonly confidence: number,
  ) {
    this.parallelism = engine.gridParallelism(multiplicities.length);
  }

  /**
   * One slice: all its runs in one grid, or (conditional scoring) each run on its own grid
   * whose variables keep only the reports where `validOf(run, variable)` holds.
   */
  async addSlice(
    variables: readonly GridVariable[],
    runs: readonly GridRun[],
    conditional: boolean,
    validOf: (run: number, variable: number) => (report: number) => boolean,
  ): Promise<void> {
    if (!conditional) {
      await this.add(variables, runs);
      return;
    }
    for (const [i, run] of runs.entries()) {
      const kept = variables.map((v, column) => {
        const valid = validOf(i, column);
        return { ...v, groups: Int32Array.from(v.groups as ArrayLike<number>, (g, report) => (valid(report) ? g : -1)) };
      });
      await this.add(kept, [run]);
    }
  }

  /** Runs per slice for a computation over `runs` runs, at least `minimum`. */
  sliceRuns(minimum: number, runs: number): number {
    return this.engine.gridSliceRuns(minimum, runs, this.multiplicities.length);
  }

  all(): Promise<BootstrapGridResult> {
    return Promise.all(this.grids).then((grids) => concatGrids(grids, (length) => this.engine.float64(length)));
  }

  private async add(variables: readonly GridVariable[], runs: readonly GridRun[]): Promise<void> {
    while (this.computing.size >= this.parallelism) await Promise.race(this.computing);
    if (this.failure !== null) throw this.failure;
    const grid = this.engine.grid(variables, runs, this.multiplicities, this.confidence);
    this.grids.push(grid);
    // Handled here (so no rejection goes unhandled) and remembered; `all` reports it too. Not
    // `finally`, which would hand the rejection on to a promise nobody awaits.
    const settled: Promise<void> = grid.then(
      () => void this.computing.delete(settled),
      (error: unknown) => {
        this.failure ??= error;
        this.computing.delete(settled);
      },
    );
    this.computing.add(settled);
  }
}
