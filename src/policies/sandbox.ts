// A sandboxed answer, as a route declares it (`sandbox`): every answer of
// the route carries `Content-Security-Policy: sandbox` (with the allowances
// declared, e.g. `allow-forms`), so whatever HTML, SVG or XML it returns is a
// document with an opaque origin of its own that runs no script (CSP Level 3,
// the sandbox directive; HTML's sandboxing flags). The page at / may hold an
// administrator's token in this origin's storage, and the wire view trusts
// this origin's requests: a document the lab returns, with markup a link can
// choose (base64, response-headers), must not be this origin.

import type { Policy } from "../router/policy.js";
import type { Route } from "../router/route.js";
import { addingFields } from "./fields.js";

/** The sandboxing flags a route lifts, beyond the sandbox itself: never allow-scripts or allow-same-origin. */
export type SandboxAllowance = "allow-forms";

/** What a route declares for this policy. */
export interface SandboxDeclared {
  /** Its answers are sandboxed documents; the list lifts the flags named (none: `[]`). */
  readonly sandbox?: readonly SandboxAllowance[];
}

export const sandboxPolicy: Policy<Route & SandboxDeclared> = (route) => {
  if (route.sandbox === undefined) return undefined;
  const value = ["sandbox", ...route.sandbox].join(" ");
  return {
    wrap: addingFields({ "Content-Security-Policy": value }),
    doc: {
      note: `Every answer is sandboxed (Content-Security-Policy: ${value}): a document it returns has an origin of its own and runs no script.`,
      successHeaders: { "Content-Security-Policy": `${value}: the document runs no script as this origin` },
    },
  };
};
