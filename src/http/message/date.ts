// The Date field value (RFC 9110 §6.6.1), an IMF-fixdate rebuilt at most once a second.
//
// Every response carries it, so formatting a date per request would be waste;
// a timer clears the cached value at the next second boundary instead of each
// request asking the clock.

let cached: string | null = null;

export function httpDate(): string {
  if (cached === null) {
    const now = Date.now();
    cached = new Date(now).toUTCString();
    setTimeout(() => {
      cached = null;
    }, 1000 - (now % 1000)).unref();
  }
  return cached;
}

/** An HTTP-date for a given instant, e.g. for Sunset (RFC 8594). */
export function formatHttpDate(date: Date): string {
  return date.toUTCString();
}
