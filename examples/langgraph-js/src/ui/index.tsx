// Generative UI components (langgraph.json "ui"): the page renders them with LoadExternalComponent.
import { useState } from "react";
import { Badge } from "./badge.tsx";
import "./styles.css";

/** A greeting card, pushed by a graph as a UI message named "greeting". */
function Greeting(props: { who: string }) {
  const [clicks, setClicks] = useState(0);
  return (
    <div className="greeting">
      <p>Hello, {props.who}!</p>
      <button type="button" onClick={() => setClicks(clicks + 1)}>
        Wave <Badge count={clicks} />
      </button>
    </div>
  );
}

export default { greeting: Greeting };
