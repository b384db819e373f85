// LangGraph's checkpointer validation suite over ours: a Vitest file (the suite is written for
// a Jest-like runner), run by `npm run test:checkpointer` (scripts/test-checkpointer.sh).
import { validate } from "@langchain/langgraph-checkpoint-validation";
import initializer from "./initializer.ts";

validate(initializer);
