/** A count beside a label. */
export function Badge({ count }: { count: number }) {
  return <span className="badge">{count}</span>;
}
