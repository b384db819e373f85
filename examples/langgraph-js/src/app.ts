import { Hono } from "hono";

/** Custom routes served beside the Agent API (langgraph.json "http.app"). */
export const app = new Hono();

app.get("/hello", (c) => c.json({ hello: process.env.GREETING ?? "world" }));

// Wraps every answer, the API's included, as LangGraph's custom middleware does.
app.use("*", async (c, next) => {
  await next();
  c.res.headers.set("x-example", "langgraph-js");
});
