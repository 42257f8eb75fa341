import { ValidateBy, type ValidationOptions } from 'class-validator';

/** A character a name may not hold, and what kind of character it is. */
export interface UnsafeCharacter {
  /** `U+202E`; for an unpaired surrogate, the lone code unit. */
  codePoint: string;
  kind: 'a control character' | 'a line separator' | 'a bidirectional control' | 'an unpaired surrogate';
}

/**
 * The bidirectional embeddings, overrides and isolates (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI,
 * PDI): they reorder the text around them, so a name can display as something else than it is
 * (https://trojansource.codes). The marks (LRM, RLM, ALM), which only tie neutral characters to a
 * direction and which right-to-left names may need, are allowed.
 */
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069]/;

/**
 * The first character of `text` that does not belong in a name, or undefined: a control
 * character (C0, DEL, C1: CR, LF and tab included), a line or paragraph separator (U+2028,
 * U+2029), a bidirectional control, or half of a surrogate pair without its other half (not
 * text at all: it cannot be stored or sent as UTF-8).
 */
export function findUnsafeCharacter(text: string): UnsafeCharacter | undefined {
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return { codePoint: codePointName(unit), kind: 'an unpaired surrogate' };
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return { codePoint: codePointName(unit), kind: 'an unpaired surrogate' };
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return { codePoint: codePointName(unit), kind: 'a control character' };
    if (unit === 0x2028 || unit === 0x2029) return { codePoint: codePointName(unit), kind: 'a line separator' };
    if (BIDI_CONTROLS.test(text[i])) return { codePoint: codePointName(unit), kind: 'a bidirectional control' };
  }
  return undefined;
}

function codePointName(unit: number): string {
  return `U+${unit.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** The rule, for the OpenAPI document. */
export const NAME_RULES =
  '1 to 200 characters; no control characters (CR, LF, tab…), line separators, bidirectional controls or unpaired surrogates';

/**
 * A free-text name (of a webhook, an API key, a store) holds no character from
 * {@link findUnsafeCharacter}: names end up in logs, dashboards and `webhook.*` event data, where
 * a line break forges a log line and a bidirectional override disguises the name. A value that is
 * not a string is left to the property's other rules.
 */
export function IsSafeName(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isSafeName',
      validator: {
        validate: (value: unknown) => typeof value !== 'string' || findUnsafeCharacter(value) === undefined,
        defaultMessage: (args) => {
          const found = typeof args?.value === 'string' ? findUnsafeCharacter(args.value) : undefined;
          const what = found ? ` (it contains ${found.codePoint}, ${found.kind})` : '';
          return `${args?.property ?? 'name'} must not contain control characters, line separators, bidirectional controls or unpaired surrogates${what}`;
        },
      },
    },
    options,
  );
}
