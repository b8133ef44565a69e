import t from "tap";
import { laterOf, parseSequentialId, pickIndex } from "../../src/store/records.js";
import { isRole } from "../../src/store/types.js";

t.test("pickIndex", async (t) => {
  t.equal(pickIndex(0.5, 0), undefined, "nothing to pick");
  t.equal(pickIndex(0, 3), 0);
  t.equal(pickIndex(0.34, 3), 1);
  t.equal(pickIndex(0.999999, 3), 2);
  t.equal(pickIndex(1, 3), 2, "clamped above");
  t.equal(pickIndex(-0.1, 3), 0, "clamped below");
  t.equal(pickIndex(Number.NaN, 3), 0, "NaN picks the first");
});

t.test("parseSequentialId", async (t) => {
  t.equal(parseSequentialId("1"), 1);
  t.equal(parseSequentialId("42"), 42);
  for (const id of ["0", "01", "-1", "1.0", " 1", "1e3", "", "x", "9999999999999999"]) {
    t.equal(parseSequentialId(id), undefined, JSON.stringify(id));
  }
});

t.test("laterOf", async (t) => {
  t.equal(laterOf("2025-01-02T00:00:00.000Z", "2025-01-01T00:00:00.000Z"), "2025-01-02T00:00:00.000Z");
  t.equal(laterOf("2024-12-31T00:00:00.000Z", "2025-01-01T00:00:00.000Z"), "2025-01-01T00:00:00.000Z");
});

t.test("isRole", async (t) => {
  t.ok(isRole("user"));
  t.ok(isRole("admin"));
  t.notOk(isRole("Admin"));
  t.notOk(isRole("root"));
});
