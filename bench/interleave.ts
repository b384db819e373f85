/**
 * Fine interleaving of configurations for a CPU-cost comparison, and how sure its ratios are.
 * Each cycle runs every configuration once, in an order drawn anew each cycle (a seeded
 * shuffle: repeatable, and none is always first or always after the same other one), so a
 * slow drift of the machine, a timer or a garbage collection lands on each alike. A
 * configuration's figure is its MEAN CPU per run over all its runs (a collection is a cost of
 * the runs that made the garbage: not dropped as a median would). The interval of a ratio of
 * means is a block bootstrap over cycles (runs of one cycle stay paired; consecutive cycles
 * are resampled together, since a collection's cost spills over a few runs).
 *
 * @example
 * const cycles = await interleave([a, b], { runs: 1000, warmup: 50 });
 * const { ratio, lo, hi } = ratioInterval(cycles.map((c) => c[1]!), cycles.map((c) => c[0]!));
 */

/** One configuration under test: `once` does one run and resolves its CPU time in ms. */
export interface Runner {
  name: string;
  once(i: number): Promise<number>;
  /** Of `once`'s CPU ms, the mean spent between a run's request and its answer, when known. */
  during?(): Promise<number>;
  close(): Promise<void>;
}

/** A small seeded generator (mulberry32): the same schedule on every invocation. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shuffled(n: number, next: () => number): number[] {
  const order = [...Array(n).keys()];
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * Runs `warmup` unmeasured cycles, then `runs` measured ones; resolves one row per measured
 * cycle with each runner's CPU ms at its index.
 */
export async function interleave(
  runners: Runner[],
  opts: { runs: number; warmup: number; seed?: number; onCycle?: (done: number) => void },
): Promise<number[][]> {
  const next = random(opts.seed ?? 35);
  const cycles: number[][] = [];
  for (let c = 0; c < opts.warmup + opts.runs; c++) {
    const row: number[] = Array(runners.length).fill(0);
    for (const i of shuffled(runners.length, next)) row[i] = await runners[i]!.once(c);
    if (c >= opts.warmup) cycles.push(row), opts.onCycle?.(cycles.length);
  }
  return cycles;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
export const mean = (xs: number[]) => sum(xs) / xs.length;

/**
 * The ratio of means `mean(a) / mean(b)` (a and b paired by cycle) and its 95% interval: a
 * bootstrap over blocks of `block` consecutive cycles, `resamples` times (percentiles).
 */
export function ratioInterval(
  a: number[],
  b: number[],
  opts: { block?: number; resamples?: number } = {},
): { ratio: number; lo: number; hi: number } {
  const block = opts.block ?? 10;
  const sums: Array<[number, number]> = [];
  for (let i = 0; i < a.length; i += block) {
    sums.push([sum(a.slice(i, i + block)), sum(b.slice(i, i + block))]);
  }
  const next = random(7);
  const ratios: number[] = [];
  for (let r = 0; r < (opts.resamples ?? 2000); r++) {
    let sa = 0, sb = 0;
    for (let k = 0; k < sums.length; k++) {
      const [x, y] = sums[Math.floor(next() * sums.length)]!;
      sa += x, sb += y;
    }
    ratios.push(sa / sb);
  }
  ratios.sort((x, y) => x - y);
  const at = (q: number) => ratios[Math.min(ratios.length - 1, Math.floor(q * ratios.length))]!;
  return { ratio: sum(a) / sum(b), lo: at(0.025), hi: at(0.975) };
}

/** The ratio of means within each of `k` consecutive parts of the cycles (the spread a shorter bench would show). */
export function partRatios(a: number[], b: number[], k: number): number[] {
  const size = Math.ceil(a.length / k);
  const out: number[] = [];
  for (let i = 0; i < a.length; i += size) out.push(sum(a.slice(i, i + size)) / sum(b.slice(i, i + size)));
  return out;
}
