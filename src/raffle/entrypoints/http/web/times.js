// Times as the console shows them: an activity's in the activity's own time zone (the one
// its days and months are counted in), every other one in the browser's, with the zone named.
// The API answers instants in UTC.

// ISO 8601 with a UTC offset, to the second (what the API answers and accepts).
const ZONED_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/;

// The instant `iso` as ISO text in `zone` with its offset there, e.g.
// "2026-11-11T00:00:00+08:00"; text that is not such an instant, or an unknown zone, is
// given back as it is (the server names what is wrong with it).
export function inZone(iso, zone) {
  if (typeof iso !== "string" || !ZONED_ISO.test(iso)) return iso;
  let parts;
  try {
    parts = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
      hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "longOffset",
    }).formatToParts(new Date(iso));
  } catch {
    return iso; // RangeError: not a time zone
  }
  const p = Object.fromEntries(parts.map(({ type, value }) => [type, value]));
  const offset = p.timeZoneName === "GMT" ? "+00:00" : p.timeZoneName.slice(3);
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}:${p.second}${offset}`;
}

export function knownZone(zone) {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return Boolean(zone);
  } catch {
    return false;
  }
}

// The browser's time zone, e.g. "Europe/Berlin".
export const localZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone;

// Date and time in the browser's zone, its short name after it ("11/22/2026, 1:05:09 PM EST").
export const localTime = (at) => new Date(at).toLocaleString(undefined, { timeZoneName: "short" });

// The time of day alone, the same way.
export const localClock = (at) => new Date(at).toLocaleTimeString(undefined, { timeZoneName: "short" });
