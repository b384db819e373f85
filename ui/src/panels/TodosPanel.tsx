import { Icon } from "../icons.tsx";
import type { Todo } from "../chat/state.ts";

/** The agent's plan (state `todos`), live. */
export function TodosPanel({ todos }: { todos: Todo[] }) {
  if (!todos.length) return <p className="panel-empty">The agent's plan appears here when it breaks work into steps.</p>;
  const done = todos.filter((t) => t.status === "completed").length;
  return (
    <div data-testid="todos-panel">
      <div className="progress" aria-label={`${done} of ${todos.length} done`}>
        <div className="progress-bar" style={{ width: `${(done / todos.length) * 100}%` }} />
      </div>
      <ul className="todos">
        {todos.map((t, i) => (
          <li key={i} className={`todo ${t.status}`} data-status={t.status}>
            <span className="todo-mark" aria-label={t.status.replace("_", " ")}>
              {t.status === "completed" ? <Icon name="check" /> : t.status === "in_progress" ? <span className="spinner" /> : <Icon name="circle" />}
            </span>
            <span className="todo-text">{t.content}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
