// The API reference at /docs: Swagger UI (bundled, no CDN) on this server's /openapi.json.
// "Authorize" takes the same credentials the API takes (a bearer token or x-api-key); they are
// kept in this browser's localStorage only, and same-origin cookies go along with each call.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  persistAuthorization: true,
  withCredentials: true,
  tryItOutEnabled: false,
  displayRequestDuration: true,
  filter: true,
});
