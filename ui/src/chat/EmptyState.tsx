/** The hero shown before the first message: app name, subtitle and suggestion chips. */
import { Icon } from "../icons.tsx";

export function EmptyState({ appName, subtitle, prompts, onPick }: {
  appName: string;
  subtitle: string;
  prompts: string[];
  onPick: (prompt: string) => void;
}) {
  return (
    <div className="empty" data-testid="empty-state">
      <div className="empty-mark" aria-hidden><Icon name="sparkle" /></div>
      <h1>{appName}</h1>
      {subtitle && <p className="empty-subtitle">{subtitle}</p>}
      {prompts.length > 0 && (
        <div className="chips" role="list">
          {prompts.map((p) => (
            <button key={p} type="button" role="listitem" className="chip" onClick={() => onPick(p)}>{p}</button>
          ))}
        </div>
      )}
    </div>
  );
}
