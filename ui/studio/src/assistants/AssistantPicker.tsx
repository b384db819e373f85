/** Chooses the assistant the studio works with. */
import type { Assistants } from "../useAssistants.ts";

export function AssistantPicker({ assistants }: { assistants: Assistants }) {
  return (
    <label className="field-inline">
      Assistant{" "}
      <select value={assistants.selected?.assistant_id ?? ""} onChange={(e) => assistants.select(e.target.value)} data-testid="assistant-picker">
        {assistants.list.map((a) => <option key={a.assistant_id} value={a.assistant_id}>{a.name} ({a.graph_id})</option>)}
      </select>
    </label>
  );
}
