/**
 * The studio's state in the address bar (`/studio/?area=trace&thread=…&run=…&checkpoint=…`):
 * a deep link opens that area, thread, run or checkpoint; reload keeps it; back and forward
 * walk it. A query, not the fragment: an identity provider's sign-in returns in the fragment.
 */
import { useCallback, useEffect, useRef, useState } from "react";

export const AREAS = ["Graph", "Threads", "Timeline", "Trace", "Store", "Assistants"] as const;
export type Area = (typeof AREAS)[number];

export interface Route {
  area: Area;
  thread: string | null;
  run: string | null;
  checkpoint: string | null;
}

/** The route of a query string; unknown areas and empty values fall back to the defaults. */
export function parseRoute(search: string): Route {
  const q = new URLSearchParams(search);
  const name = (q.get("area") ?? "").toLowerCase();
  const area = AREAS.find((a) => a.toLowerCase() === name) ?? "Graph";
  const value = (k: string) => q.get(k)?.trim() || null;
  return { area, thread: value("thread"), run: value("run"), checkpoint: value("checkpoint") };
}

/** The query string of a route (other parameters of the current address kept). */
export function routeSearch(r: Route, current = ""): string {
  const q = new URLSearchParams(current);
  q.set("area", r.area.toLowerCase());
  for (const k of ["thread", "run", "checkpoint"] as const) {
    const v = r[k];
    if (v) q.set(k, v);
    else q.delete(k);
  }
  return `?${q.toString()}`;
}

/** The route, and a navigate that pushes a history entry (or replaces it) when the route changes. */
export function useRoute(): [Route, (next: Partial<Route>, opts?: { replace?: boolean }) => void] {
  const [route, setRoute] = useState<Route>(() => parseRoute(location.search));
  const current = useRef(route);
  current.current = route;
  useEffect(() => {
    const onPop = () => setRoute(parseRoute(location.search));
    addEventListener("popstate", onPop);
    return () => removeEventListener("popstate", onPop);
  }, []);
  const navigate = useCallback((next: Partial<Route>, opts: { replace?: boolean } = {}) => {
    const merged = { ...current.current, ...next };
    const search = routeSearch(merged, location.search);
    if (search !== location.search) {
      const url = `${location.pathname}${search}${location.hash}`;
      if (opts.replace) history.replaceState(null, "", url);
      else history.pushState(null, "", url);
    }
    current.current = merged;
    setRoute(merged);
  }, []);
  return [route, navigate];
}
