// The policy of a route's declared body (Route.request): a body the route
// does not take is refused from the head, before it is read (RFC 9110
// §15.5.16 415 for a Content-Type not listed, §15.5.14 413 past `maxBytes`),
// and a body that is taken is read no further than `maxBytes`.

import { refuseMediaType } from "../http/message/media.js";
import type { Policy } from "./policy.js";
import type { Route } from "./route.js";

export const declaredBody: Policy<Route> = (route) => {
  const declared = route.request;
  if (declared === undefined) return undefined;
  const limit = declared.maxBytes === undefined ? undefined : { maxBodyBytes: declared.maxBytes };
  return {
    admit: (head) => {
      const refusal = refuseMediaType(head, declared.mediaTypes, declared.why);
      return refusal === undefined ? limit : { refuse: refusal };
    },
    doc: {
      responses: {
        415: {
          description: `The body's Content-Type is not ${declared.mediaTypes.join(" or ")} (or its charset is not UTF-8)`,
          headers: { [route.method === "PATCH" || route.method === "UPDATE" ? "Accept-Patch" : "Accept-Post"]: "The media types accepted" },
        },
      },
    },
  };
};
