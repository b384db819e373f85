/**
 * "One large request never stalls other requests", measured the same way for every server:
 * `/ok` is pinged while `work` (a maximal request) runs; the answer says how many pings were
 * answered during it and the worst of them, beside the idle median. Tests assert that pings
 * complete during the work and none waits for the whole of it (a ratio, not a wall-clock limit).
 *
 * @example
 * const m = await okLatencyDuring(url, () => fetch(`${url}/big`, { method: "PUT", body }));
 * assert.ok(m.during.length >= 2 && m.worst < m.took * 0.9);
 */
export async function okLatencyDuring<T>(
  baseUrl: string,
  work: () => Promise<T>,
): Promise<{ result: T; took: number; during: number[]; worst: number; idleMedian: number }> {
  const ping = async () => {
    const s = performance.now();
    await (await fetch(`${baseUrl}/ok`)).text();
    return performance.now() - s;
  };
  const idle: number[] = [];
  for (let i = 0; i < 20; i++) idle.push(await ping());
  let done = false;
  const during: number[] = [];
  const pinger = (async () => {
    while (!done) {
      during.push(await ping());
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const start = performance.now();
  try {
    const result = await work();
    return {
      result,
      took: performance.now() - start,
      during,
      worst: Math.max(...during),
      idleMedian: idle.sort((a, b) => a - b)[10]!,
    };
  } finally {
    done = true;
    await pinger;
  }
}
