import { useState } from "react";
import { Icon } from "../icons.tsx";
import { Markdown } from "../chat/Markdown.tsx";
import { fileText } from "../chat/state.ts";
import type { FileData } from "../chat/state.ts";

/** The agent's files (state `files`), with its memory (`/memories/...`) grouped apart. */
export function FilesPanel({ files }: { files: Record<string, FileData | null> }) {
  const [open, setOpen] = useState<string | null>(null);
  const paths = Object.keys(files).filter((p) => files[p]).sort();
  if (!paths.length) return <p className="panel-empty">Files the agent writes, and its memory, appear here.</p>;
  const memory = paths.filter((p) => p.startsWith("/memories/"));
  const work = paths.filter((p) => !p.startsWith("/memories/"));
  const group = (title: string, list: string[]) => list.length > 0 && (
    <section className="file-group">
      <h3>{title}</h3>
      <ul className="files">
        {list.map((p) => {
          const text = fileText(files[p]);
          const isOpen = open === p;
          return (
            <li key={p} className={isOpen ? "open" : ""}>
              <button type="button" className="file-row" aria-expanded={isOpen} onClick={() => setOpen(isOpen ? null : p)}>
                <Icon name="file" /><span className="file-path" title={p}>{p}</span>
                <span className="muted small">{text === null ? "binary" : `${text.split("\n").length} lines`}</span>
              </button>
              {isOpen && (
                <div className="file-view">
                  {text === null ? <p className="muted">Binary file ({files[p]?.mimeType ?? "unknown type"}).</p>
                    : p.endsWith(".md") ? <Markdown text={text} /> : <pre>{text}</pre>}
                </div>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
  return (
    <div data-testid="files-panel">
      {group("Workspace", work)}
      {group("Memory", memory)}
    </div>
  );
}
