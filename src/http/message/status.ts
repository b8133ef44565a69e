// Reason phrases (RFC 9110 §15) and the status lines built from them once, at load.

export const REASONS: Readonly<Record<number, string>> = {
  100: "Continue",
  101: "Switching Protocols",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  206: "Partial Content",
  301: "Moved Permanently",
  302: "Found",
  303: "See Other",
  304: "Not Modified",
  307: "Temporary Redirect",
  308: "Permanent Redirect",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  411: "Length Required",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  417: "Expectation Failed",
  422: "Unprocessable Content",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
  505: "HTTP Version Not Supported",
};

const STATUS_LINES = new Map<number, string>();
for (const [code, reason] of Object.entries(REASONS)) STATUS_LINES.set(Number(code), `HTTP/1.1 ${code} ${reason}\r\n`);

/**
 * "HTTP/1.1 200 OK\r\n". The server answers every 1.x request as HTTP/1.1, the
 * highest version it speaks (RFC 9110 §6.2). An unlisted code gets an empty
 * reason phrase, which RFC 9112 §4 allows.
 */
export function statusLine(status: number): string {
  return STATUS_LINES.get(status) ?? `HTTP/1.1 ${status} \r\n`;
}

/** RFC 9110 §6.4.1, §15.3.5, §15.4.5: no content, and no Content-Length, on 1xx, 204 and 304. */
export function statusAllowsBody(status: number): boolean {
  return status >= 200 && status !== 204 && status !== 304;
}

export function reasonPhrase(status: number): string {
  return REASONS[status] ?? "Unknown";
}
