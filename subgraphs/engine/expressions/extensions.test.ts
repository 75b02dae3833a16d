import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ExpressionEngine, ExpressionError, type ExpressionData } from './engine';
import { EXTENSION_NAMES, PRELUDE_KEY, Sandbox } from '../sandbox';

/**
 * n8n's extension methods and helpers, as n8n's documentation (docs.n8n.io, "Data transformation
 * functions") and its own test expectations describe them, evaluated the way a native n8n node's
 * parameter is (`={{ … }}`).
 */

const sandbox = new Sandbox({ memoryMb: 32, timeoutMs: 2000, poolSize: 2 });
const engine = new ExpressionEngine(sandbox);
afterAll(() => sandbox.dispose());

function data(json: Record<string, unknown> = {}, timezone?: string): ExpressionData {
  return {
    items: [{ json }],
    nodes: new Map(),
    execution: { id: 'e1', mode: 'manual', resumeUrl: '/r' },
    workflow: { id: 'w1', name: 'W', active: false, timezone },
  };
}

/** The value of `={{ expr }}` for one item, as an n8n node sees it. */
async function ev(expr: string, json: Record<string, unknown> = {}, timezone?: string): Promise<unknown> {
  const [out] = await engine.resolve({ v: `={{ ${expr} }}` }, data(json, timezone), { n8n: true });
  return out!.v;
}

/** Several expressions in one evaluation: [expression, expected] pairs. */
async function expectAll(cases: [string, unknown][], json: Record<string, unknown> = {}, timezone?: string): Promise<void> {
  const params = Object.fromEntries(cases.map(([expr], i) => [`p${i}`, `={{ ${expr} }}`]));
  const [out] = await engine.resolve(params, data(json, timezone), { n8n: true });
  cases.forEach(([expr, expected], i) => assert.deepEqual(out![`p${i}`], expected, expr));
}

async function fails(expr: string, message: RegExp, json: Record<string, unknown> = {}): Promise<void> {
  await assert.rejects(ev(expr, json), (err: unknown) => {
    assert.ok(err instanceof ExpressionError, String(err));
    assert.match(err.message, message);
    return true;
  });
}

describe('strings', () => {
  test('tests and case', async () => {
    await expectAll([
      ['"".isEmpty()', true],
      ['"a".isNotEmpty()', true],
      ['"  ".isBlank()', true],
      ['"  hello  ".isNotBlank()', true],
      ['"me@example.com".isEmail()', true],
      ['"It\'s me@example.com".isEmail()', false],
      ['"https://example.com/path?query=1".isUrl()', true],
      ['"example.com".isUrl()', false],
      ['"http:///".isUrl()', false],
      ['"example.co.uk".isDomain()', true],
      ['"example_com".isDomain()', false],
      ['"example.com:8080".isDomain()', true],
      ['"123E23".isNumeric()', true],
      ['"1 2".isNumeric()', false],
      ['"quick a brown FOX".toTitleCase()', 'Quick a Brown FOX'],
      ['"the lord of the rings".toTitleCase()', 'The Lord of the Rings'],
      ['"i am a test! i have multiple types of Punctuation. or do i?".toSentenceCase()', 'I am a test! I have multiple types of punctuation. Or do i?'],
      ['"hello world. 123".toSentenceCase()', 'Hello world. 123'],
      ['"quick brown $FOX".toSnakeCase()', 'quick_brown_fox'],
      ['"I am a test!".toSnakeCase()', 'i_am_a_test'],
      ['"String".length()', 6],
    ]);
  });

  test('extracting', async () => {
    await expectAll([
      ['"My email is me@example.com".extractEmail()', 'me@example.com'],
      ['"no email".extractEmail()', null],
      ['"jane.doe@example.org".extractDomain()', 'example.org'],
      ['"http://n8n.io/workflows".extractDomain()', 'n8n.io'],
      ['"https://www.example.net?test=1213".extractDomain()', 'www.example.net'],
      ['"mailto:john.doe@example.com".extractDomain()', 'example.com'],
      ['"tel:+1-555-123-4567".extractDomain()', null],
      ['"Check this out: https://subdomain.example.com:3000/path?q=1#hash".extractUrl()', 'https://subdomain.example.com:3000/path?q=1#hash'],
      ['"Mixed content: https://www.example.com and http://www.example.org".extractUrl()', 'https://www.example.com'],
      ['"Invalid URL: http:///example.com".extractUrl()', null],
      ['"https://example.com/orders/1/detail#hash?foo=bar".extractUrlPath()', '/orders/1/detail'],
      ['"http://example.com".extractUrlPath()', '/'],
      ['"hi".extractUrlPath()', null],
    ]);
  });

  test('converting', async () => {
    await expectAll([
      ['"123".toNumber()', 123],
      ['"1.23E10".toNumber()', 12300000000],
      ['"$25".toNumber()', 25],
      ['"1.5".toInt()', 1],
      ['"ff".toInt(16)', 255],
      ['"1.1".toFloat()', 1.1],
      ['"1.1".toDecimalNumber()', 1.1],
      ['"1.9".toWholeNumber()', 1],
      ['"False".toBoolean()', false],
      ['"no".toBoolean()', false],
      ['"0".toBoolean()', false],
      ['"".toBoolean()', false],
      ['"hello".toBoolean()', true],
      ['\'{"a":[1,2]}\'.parseJson()', { a: [1, 2] }],
      ['"The \\"best\\" colours: red\\nbrown".toJsonString()', '"The \\"best\\" colours: red\\nbrown"'],
      ['"2022-09-01T19:42:28.164Z".toDate()', '2022-09-01T19:42:28.164Z'],
    ]);
    await fails('"abc".toNumber()', /cannot convert to number/);
    await fails('"1,5".toFloat()', /cannot convert to float, expected \. as decimal separator/);
    await fails('"x".toInt()', /cannot convert to integer/);
    await fails('"{\'a\':1}".parseJson()', /Parsing failed\. Check you're using double quotes/);
    await fails('"2022-09-32T19:42:28.164Z".toDate()', /cannot convert to date/);
  });

  test('editing and encoding', async () => {
    await expectAll([
      ['"<b>bold</b>, <a>link</a>".removeTags()', 'bold, link'],
      ['"*bold*, [link](http://x.y)".removeMarkdown()', 'bold, link'],
      ['"# Title\\n\\n- one\\n- two".removeMarkdown()', 'Title\n\none\ntwo'],
      ['"déjà vu — Ærø".replaceSpecialChars()', 'deja vu - AEro'],
      ['"name=Nathan Automat".urlEncode()', 'name%3DNathan%20Automat'],
      ['"name=Nathan Automat".urlEncode(true)', 'name=Nathan%20Automat'],
      ['"name%3DNathan%20Automat".urlDecode()', 'name=Nathan Automat'],
      ['"name%3DNathan%20Automat".urlDecode(true)', 'name%3DNathan Automat'],
      ['"n8n test".base64Encode()', 'bjhuIHRlc3Q='],
      ['"bjhuIHRlc3Q=".base64Decode()', 'n8n test'],
      ['"héllo ✓".base64Encode().base64Decode()', 'héllo ✓'],
      ['\'Nathan says "hi"\'.quote()', '"Nathan says \\"hi\\""'],
      ['"it\'s".quote("\'")', "'it\\'s'"],
      ['"12345".hash("base64")', 'MTIzNDU='],
    ]);
    await fails('"%%%".urlDecode()', /not valid URL encoding/);
    await fails('"Жук".replaceSpecialChars()', /cannot spell "Ж" in ASCII/);
  });

  test('hash(): every algorithm n8n offers, computed inside the sandbox', async () => {
    const names = { md5: 'md5', sha1: 'sha1', sha224: 'sha224', sha256: 'sha256', sha384: 'sha384', sha512: 'sha512', sha3: 'sha3-512' };
    for (const text of ['12345', '', 'héllo wörld ✓ 😀', 'x'.repeat(200)]) {
      const cases = Object.entries(names).map(([algo, node]): [string, unknown] => [
        `$json.t.hash(${JSON.stringify(algo.toUpperCase())})`,
        createHash(node).update(text).digest('hex'),
      ]);
      await expectAll([...cases, ['$json.t.hash()', createHash('md5').update(text).digest('hex')]], { t: text });
    }
    // n8n's own expectations
    await expectAll([
      [
        '"12345".hash("sha3")',
        '0a2a1719bf3ce682afdbedf3b23857818d526efbe7fcb372b31347c26239a0f916c398b7ad8dd0ee76e8e388604d0b0f925d5e913ad2d3165b9b35b3844cd5e6',
      ],
      ['"hello".hash()', '5d41402abc4b2a76b9719d911017c592'],
    ]);
    await fails('"12345".hash("whirlpool")', /Unknown algorithm whirlpool\. Available algorithms are: md5,sha1,sha224,sha256,sha384,sha512,sha3, and Base64\./);
  });
});

describe('numbers and booleans', () => {
  test('rounding, tests, formatting, conversions', async () => {
    await expectAll([
      ['(1.256).round()', 1],
      ['(1.256).round(1)', 1.3],
      ['(1.256).round(2)', 1.26],
      ['(1.234).ceil()', 2],
      ['(1.234).floor()', 1],
      ['(-1.7).abs()', 1.7],
      ['(42).isEven()', true],
      ['(33).isOdd()', true],
      ['(-3).isOdd()', true],
      ['(4.12).isInteger()', false],
      ["(123456.789).format('de-DE')", '123.456,789'],
      ["(123456.789).format('de-DE', {'style': 'currency', 'currency': 'EUR'})", '123.456,79\u00a0€'],
      ['(1234.5).format()', '1,234.5'],
      ['(0).toBoolean()', false],
      ['(-1.3).toBoolean()', true],
      ['(1.5).toInt()', 2],
      ['(1.5).toFloat()', 1.5],
      ['true.toNumber()', 1],
      ['false.toInt()', 0],
      ['true.toBoolean()', true],
    ]);
    await fails('(1.5).isEven()', /isEven\(\) is only callable on integers/);
  });

  test('toDateTime from timestamps, in the workflow zone', async () => {
    await expectAll(
      [
        ["(1708695471).toDateTime('s')", '2024-02-23T14:37:51.000+01:00'],
        ["(1708695471000).toDateTime('ms')", '2024-02-23T14:37:51.000+01:00'],
        ['(1708695471000).toDateTime()', '2024-02-23T14:37:51.000+01:00'],
        ["(1708695471000000).toDateTime('us')", '2024-02-23T14:37:51.000+01:00'],
        ["(45345).toDateTime('excel')", '2024-02-23T01:00:00.000+01:00'],
      ],
      {},
      'Europe/Berlin',
    );
    await fails("(1).toDateTime('weeks')", /Unsupported format 'weeks'\. toDateTime\(\) supports 'ms', 's', 'us' and 'excel'\./);
  });
});

describe('arrays', () => {
  test('picking, testing, aggregating', async () => {
    await expectAll(
      [
        ["['quick', 'brown', 'fox'].first()", 'quick'],
        ["['quick', 'brown', 'fox'].last()", 'fox'],
        ['[].isEmpty()', true],
        ['[1].isNotEmpty()', true],
        ['[12, 1, 5].sum()', 18],
        ['[12, 1, 5].min()', 1],
        ['[1, 12, 5].max()', 12],
        ['[12, 1, 5].average()', 6],
        ['[].average()', 0],
        ["['a', 'b'].includes($json.x.randomItem())", true],
      ],
      { x: ['a', 'b'] },
    );
    await fails('[1, "2"].sum()', /sum\(\): all array elements must be numbers/);
  });

  test('reshaping', async () => {
    await expectAll([
      ["['quick', 'brown', 'quick'].unique()", ['quick', 'brown']],
      [
        "[{ name: 'Nathan', age: 42 }, { name: 'Nathan', age: 22 }].unique()",
        [
          { name: 'Nathan', age: 42 },
          { name: 'Nathan', age: 22 },
        ],
      ],
      ["[{ name: 'Nathan', age: 42 }, { name: 'Nathan', age: 22 }].removeDuplicates('name')", [{ name: 'Nathan', age: 42 }]],
      ["[{ name: 'Nathan', age: 42 },{ name: 'Jan', city: 'Berlin' }].pluck('name')", ['Nathan', 'Jan']],
      ["[{ name: 'Nathan', age: 42 },{ name: 'Jan', city: 'Berlin' }].pluck('age', 'name')", [['Nathan', 42], 'Jan']],
      ['[2, null, 1, "", "nil", {}, [], { a: null, b: 1 }].compact()', [2, 1, { b: 1 }]],
      [
        '[1, 2, 3, 4, 5, 6].chunk(4)',
        [
          [1, 2, 3, 4],
          [5, 6],
        ],
      ],
      ['[1, 2, 3].difference([2, 3])', [1]],
      ['[1, 2].intersection([2, 3])', [2]],
      ['[1, 2].union([2, 3])', [1, 2, 3]],
      [
        "[{ name: 'Nathan' }, { age: 42 }].merge([{ city: 'Berlin' }, { country: 'Germany' }])",
        { name: 'Nathan', city: 'Berlin', age: 42, country: 'Germany' },
      ],
      ['[{ a: 1 }, { a: 2, b: 3 }].merge()', { a: 1, b: 3 }],
      ["[{ field: 'age', value: 2 }, { field: 'city', value: 'Berlin' }].smartJoin('field', 'value')", { age: 2, city: 'Berlin' }],
      ["[{ name: 'bob' }, { name: 'meg' }].renameKeys('name', 'x')", [{ x: 'bob' }, { x: 'meg' }]],
      ["['forget', 'me'].append('not')", ['forget', 'me', 'not']],
      ["['quick', 'brown'].toJsonString()", '["quick","brown"]'],
    ]);
    await fails('[1].chunk(0)', /chunk\(\): expected non-zero numeric arg/);
    await fails('[1].union(2)', /union\(\): expected array arg, e\.g\. \.union\(\[1, 2, 3, 4\]\)/);
    await fails("[{}].renameKeys('a')", /renameKeys\(\): expected an even amount of args/);
    await fails("[{}].smartJoin('a')", /smartJoin\(\): expected two string args/);
  });
});

describe('objects', () => {
  test('fields', async () => {
    await expectAll(
      [
        ['({}).isEmpty()', true],
        ["({ name: 'Nathan' }).isNotEmpty()", true],
        ["({ name: 'Nathan', age: 42 }).hasField('name')", true],
        ["({ name: 'Nathan', age: 42 }).hasField('Name')", false],
        ["({ name: 'Nathan', city: 'hanoi' }).removeField('name')", { city: 'hanoi' }],
        ["({ name: 'Mr Nathan', city: 'hanoi', age: 42 }).removeFieldsContaining('han')", { age: 42 }],
        ["({ name: 'Mr Nathan', city: 'hanoi', age: 42 }).removeFieldsContaining('Nathan')", { city: 'hanoi', age: 42 }],
        ["({ name: 'Mr Nathan', city: 'hanoi', age: 42 }).keepFieldsContaining('han')", { name: 'Mr Nathan', city: 'hanoi' }],
        ["({ x: null, y: 2, z: '', n: { a: 'nil', b: [null, 1] } }).compact()", { y: 2, n: { b: { 1: 1 } } }],
        ["({ name: 'Mr Nathan', age: 42 }).keys()", ['name', 'age']],
        ["({ name: 'Mr Nathan', age: 42 }).values()", ['Mr Nathan', 42]],
        ["({ name: 'Mr Nathan', city: 'hanoi', tag: 'a&b=c~' }).urlEncode()", 'name=Mr+Nathan&city=hanoi&tag=a%26b%3Dc%7E'],
        ["({ name: 'Nathan', age: 42 }).toJsonString()", '{"name":"Nathan","age":42}'],
        ['$json.keys()', ['a']],
      ],
      { a: 1 },
    );
    await fails("({}).removeFieldsContaining('')", /removeFieldsContaining\(\): expected non-empty string arg/);
  });
});

describe('dates', () => {
  const at = '2024-03-30T18:49:07.234';
  test("DateTime extensions: n8n's units, parts, comparisons and format", async () => {
    await expectAll(
      [
        [`"${at}".toDateTime().plus(7, 'days').toISO()`, '2024-04-06T18:49:07.234+02:00'],
        [`"${at}".toDateTime().minus(4, 'years').toISO()`, '2020-03-30T18:49:07.234+02:00'],
        [`"${at}".toDateTime().plus({ hours: 2, minutes: 1 }).toISO()`, '2024-03-30T20:50:07.234+01:00'],
        // one argument is luxon's: a number is milliseconds
        [`"${at}".toDateTime().plus(90).toISO()`, '2024-03-30T18:49:07.324+01:00'],
        [`"${at}".toDateTime().beginningOf('month').toISO()`, '2024-03-01T00:00:00.000+01:00'],
        [`"${at}".toDateTime().beginningOf().toISO()`, '2024-03-25T00:00:00.000+01:00'],
        [`"${at}".toDateTime().endOfMonth().toISO()`, '2024-03-31T23:59:59.999+02:00'],
        [`"${at}".toDateTime().extract('month')`, 3],
        [`"${at}".toDateTime().extract()`, 13],
        [`"${at}".toDateTime().extract('hour')`, 18],
        [`"${at}".toDateTime().isWeekend()`, true],
        [`"${at}".toDateTime().isWeekend`, true],
        [`"${at}".toDateTime().isDst()`, false],
        [`"${at}".toDateTime().format('dd/LL/yyyy')`, '30/03/2024'],
        [`"${at}".toDateTime().setLocale('fr').format('dd LLL yyyy')`, '30 mars 2024'],
        [`"${at}".toDateTime().isBetween('2020-06-01', '2025-06-01')`, true],
        [`"${at}".toDateTime().isBetween('2025', '2020')`, true],
        [`"2025-01-01".toDateTime().diffTo("${at}", 'days').round(2)`, 276.22],
        [`"2025-01-01T00:00:00.000".toDateTime().diffTo("${at}", ['months', 'days'])`, { months: 9, days: 105_052_766 / 86_400_000 }],
        [`"${at}".toDateTime().toInt()`, 1711820947234],
        [`"${at}".toDateTime().isEmpty()`, false],
        ['$now.isInLast(1, "hour")', true],
        ['$now.minus(2, "hours").isInLast(1, "hour")', false],
        ['$now.diffToNow("hours").round()', 0],
      ],
      {},
      'Europe/Berlin',
    );
    await fails(`"${at}".toDateTime().diffTo('2020-01-01', 'fortnights')`, /Unsupported unit 'fortnights'\. Supported: 'milliseconds', 'seconds'/);
    await fails(`"${at}".toDateTime().isBetween('2020')`, /isBetween\(\): expected exactly two args/);
  });

  test('strings to DateTimes: ISO, HTTP, RFC 2822, SQL, Date.parse, a format, timestamps; ISO-8601 UTC strings act as Dates', async () => {
    await expectAll(
      [
        ['"2008-11-11".toDateTime().toISO()', '2008-11-11T00:00:00.000-05:00'],
        ['"2024-03-29T18:06:31.798+01:00".toDateTime().toISO()', '2024-03-29T18:06:31.798+01:00'],
        ['"Wed, 21 Oct 2015 07:28:00 GMT".toDateTime().toUTC().toISO()', '2015-10-21T07:28:00.000Z'],
        ['"Fri, 29 Mar 2024 18:08:01 +0100".toDateTime().toISO()', '2024-03-29T18:08:01.000+01:00'],
        ['"2024-01-02 03:04:05".toDateTime().toISO()', '2024-01-02T03:04:05.000-05:00'],
        ['"1-Feb-2024".toDateTime().isValid', true],
        ['"31-01-2024".toDateTime("dd-MM-yyyy").toISO()', '2024-01-31T00:00:00.000-05:00'],
        ['"1713976144063".toDateTime("ms").toMillis()', 1713976144063],
        // a Date's JSON (UTC with milliseconds) is a Date for n8n's date extensions: a Date comes back
        ['"2024-03-30T18:49:00.000Z".plus(1, "day")', '2024-03-31T18:49:00.000Z'],
        ['"2024-03-30T18:49:00.000Z".beginningOf("month")', '2024-03-01T05:00:00.000Z'],
        ['"2024-03-30T18:49:00.000Z".toInt()', 1711824540000],
        ['new Date("2024-03-30T18:49:00.000Z").toDateTime().toISO()', '2024-03-30T14:49:00.000-04:00'],
      ],
      {},
      'America/New_York',
    );
    await fails('"hi".toDateTime()', /cannot convert to Luxon DateTime/);
    await fails('"2024-03-30T18:49:00.000Z".toTitleCase()', /toTitleCase\(\) is only callable on type "String"/);
  });

  test('a DateTime result is its ISO text, in the workflow zone', async () => {
    assert.equal(await ev("DateTime.fromISO('2024-01-15T10:00:00Z')", {}, 'Asia/Tokyo'), '2024-01-15T19:00:00.000+09:00');
    assert.equal(await ev('Duration.fromObject({ hours: 2 })'), 'PT2H');
    assert.equal(await ev("Interval.after(DateTime.fromISO('2024-01-01T00:00:00Z'), { days: 1 }).length('hours')"), 24);
  });
});

describe('dispatch, as n8n resolves a method name', () => {
  test("a value's own method of the same name is used when its type has no extension of that name", async () => {
    await expectAll(
      [
        ['Math.max(1, 5)', 5],
        ['Math.round(2.5)', 3],
        ['Object.keys({ a: 1, b: 2 }).first()', 'a'],
        ['$input.first().json.x', 1],
        ["Interval.after(DateTime.fromISO('2024-01-01T00:00:00Z'), { hours: 3 }).length('hours')", 3],
        // a Map is an Object for n8n: its values() is the object extension
        ['new Map([[1, 2]]).values()', []],
        ['[3, 1].keys().next().value', 0],
      ],
      { x: 1 },
    );
  });

  test('null and undefined: isEmpty() answers; other extensions fail unless called with ?.', async () => {
    await expectAll(
      [
        ['$json.missing.isEmpty()', true],
        ['$json.nothing.isNotEmpty()', false],
        ['(0).isEmpty()', true],
        ['$json.missing?.toTitleCase()', null],
        ['$json.obj?.name.toTitleCase()', null],
        ['$json.obj2?.name.toTitleCase()', 'Ann'],
      ],
      { nothing: null, obj2: { name: 'ann' } },
    );
    await fails('$json.missing.toTitleCase()', /toTitleCase can't be used on undefined value \(to ignore this error, add a \? to the variable/);
    await fails('(5).keys()', /keys\(\) is only callable on type "Object"/);
    await fails('"a".format()', /format\(\) is only callable on types "Date", and "Number"/);
  });

  test('the extensions are not on JavaScript prototypes, and not in Code nodes (n8n has them in expressions only)', async () => {
    await expectAll([
      ['typeof "a".toTitleCase', 'undefined'],
      ['typeof [].sum', 'undefined'],
      ['"isEmpty" in {}', false],
      ['$json.keys', null],
    ]);
    const out = await sandbox.run({ body: 'return String([typeof "".toTitleCase, typeof [].sum, typeof DateTime])', input: '{}' });
    assert.equal(out, 'undefined,undefined,function');
  });

  test('EXTENSION_NAMES, which decides which calls go through the dispatcher, lists exactly the functions of the sandbox', async () => {
    const out = await sandbox.run({ body: `return JSON.stringify(globalThis[Symbol.for(${JSON.stringify(PRELUDE_KEY)})].names())`, input: '{}' });
    const names = new Set(Object.values(JSON.parse(out) as Record<string, string[]>).flat());
    assert.deepEqual([...names].sort(), [...EXTENSION_NAMES].sort());
  });
});

describe("n8n's expression helpers", () => {
  test('$if evaluates only the branch taken; $ifEmpty, $min, $max, $average, $not, numberList, zip', async () => {
    await expectAll([
      ['$if($json.a, $json.a.b, "none")', 'none'],
      ['$if(1 > 0, "yes")', 'yes'],
      ['$if(false, "yes")', false],
      ['$ifEmpty($json.a, "default")', 'default'],
      ['$ifEmpty([], "default")', 'default'],
      ['$ifEmpty({ a: 1 }, "default")', { a: 1 }],
      ['$min(3, 1, 2)', 1],
      ['$max(3, 1, 2)', 3],
      ['$average(1, 2, 6)', 3],
      ['$not(0)', true],
      ['numberList(3, 1)', [3, 2, 1]],
      ["zip(['a', 'b'], [1, 2])", { a: 1, b: 2 }],
    ]);
    await fails('$if(true)', /\$if requires at least 2 parameters: test, value_if_true\[, and value_if_false\]/);
    await fails('$ifEmpty(1)', /expected two arguments \(value, defaultValue\) for this function/);
    await fails("zip(['a'], [])", /keys and values not of equal length/);
  });
});
