import { IsString, validateSync } from 'class-validator';
import { findUnsafeCharacter, IsSafeName } from './safe-text';

class Named {
  @IsString()
  @IsSafeName()
  name: unknown;
}

function problemsOf(name: unknown): string[] {
  return validateSync(Object.assign(new Named(), { name })).flatMap((error) => Object.values(error.constraints ?? {}));
}

describe('findUnsafeCharacter', () => {
  it.each([
    ['plain ASCII', 'ERP order sync'],
    ['accents and CJK', 'Bestellungen – Zürich 東京'],
    ['an emoji (a surrogate pair)', 'Orders 🚚'],
    ['right-to-left text with its marks', 'הזמנות\u200f ERP'],
    ['a zero-width joiner', '👩\u200d💻 dev'],
    ['the empty string', ''],
  ])('finds nothing in %s', (_case, text) => {
    expect(findUnsafeCharacter(text)).toBeUndefined();
  });

  it.each([
    ['a line feed', 'a\nb', 'U+000A', 'a control character'],
    ['a carriage return', 'a\rb', 'U+000D', 'a control character'],
    ['a tab', 'a\tb', 'U+0009', 'a control character'],
    ['NUL', 'a\u0000', 'U+0000', 'a control character'],
    ['DEL', '\u007fa', 'U+007F', 'a control character'],
    ['a C1 control (NEL)', 'a\u0085b', 'U+0085', 'a control character'],
    ['a line separator', 'a\u2028b', 'U+2028', 'a line separator'],
    ['a paragraph separator', 'a\u2029b', 'U+2029', 'a line separator'],
    ['a right-to-left override', 'invoice\u202Efdp.exe', 'U+202E', 'a bidirectional control'],
    ['a left-to-right embedding', '\u202Aa', 'U+202A', 'a bidirectional control'],
    ['a first-strong isolate', 'a\u2068b\u2069', 'U+2068', 'a bidirectional control'],
    ['a lone high surrogate', 'a\ud83db', 'U+D83D', 'an unpaired surrogate'],
    ['a lone high surrogate at the end', 'a\ud83d', 'U+D83D', 'an unpaired surrogate'],
    ['a lone low surrogate', '\udca9a', 'U+DCA9', 'an unpaired surrogate'],
    ['surrogates in the wrong order', '\udca9\ud83d', 'U+DCA9', 'an unpaired surrogate'],
  ])('finds %s', (_case, text, codePoint, kind) => {
    expect(findUnsafeCharacter(text)).toEqual({ codePoint, kind });
  });

  it('reports the first one', () => {
    expect(findUnsafeCharacter('ok \u202E then \n')).toEqual({ codePoint: 'U+202E', kind: 'a bidirectional control' });
  });
});

describe('@IsSafeName', () => {
  it('accepts a clean name', () => {
    expect(problemsOf('Orders 🚚')).toEqual([]);
  });

  it('names the property, the rule and the character found', () => {
    expect(problemsOf('evil\r\nname')).toEqual([
      'name must not contain control characters, line separators, bidirectional controls or unpaired surrogates (it contains U+000D, a control character)',
    ]);
  });

  it('leaves a value that is not a string to the other rules', () => {
    expect(problemsOf(42)).toEqual(['name must be a string']);
  });
});
