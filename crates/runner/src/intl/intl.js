// ECMA-402 `Intl` over ICU4X (intl/mod.rs; docs/code-mode.md, "Intl").
// This part reads and validates options, negotiates locales and answers
// resolvedOptions(); every string a user sees is formatted natively. An
// option value or locale the native side cannot honour is a RangeError
// naming it, never a different result. Run once, with the native helpers
// and web_globals.js's `publish`/`define`, and the DateTimeFormat factory
// of datetime_format.js.
(function (native, publish, define, dateTimeFormat) {
  'use strict';
  const DEFAULT_LOCALE = 'en-US';
  const unsupported = (what) => new RangeError(`Intl: ${what} is not supported in Code Mode`);

  // ---- locales ----
  const localeList = (locales) => {
    if (locales === undefined) return [];
    const list = typeof locales === 'string' ? [locales] : Array.from(Object(locales));
    const seen = [];
    for (const tag of list) {
      if (typeof tag !== 'string' && (typeof tag !== 'object' || tag === null)) {
        throw new TypeError('Language ID should be string or object.');
      }
      const canonical = native.canonicalLocale(String(tag));
      if (!seen.includes(canonical)) seen.push(canonical);
    }
    return seen;
  };
  // `de-DE-u-co-phonebk-kn` → ['de-DE', {co: 'phonebk', kn: 'true'}].
  const splitExtension = (tag) => {
    const at = tag.indexOf('-u-');
    if (/-[a-tv-z]-/.test(tag.slice(0, at < 0 ? tag.length : at)) || /-x-/.test(tag)) {
      throw unsupported(`the extension in locale "${tag}"`);
    }
    if (at < 0) return [tag, {}];
    const keywords = {};
    let key = null;
    for (const part of tag.slice(at + 3).split('-')) {
      if (part.length === 2) { key = part; keywords[key] = 'true'; } else if (key) {
        keywords[key] = keywords[key] === 'true' ? part : `${keywords[key]}-${part}`;
      }
    }
    return [tag.slice(0, at), keywords];
  };
  // The first requested locale with data (ECMA-402 lookup), else the
  // default when none was asked for; none supported: RangeError.
  const negotiate = (locales) => {
    const list = localeList(locales);
    if (list.length === 0) return [DEFAULT_LOCALE, {}];
    for (const tag of list) {
      if (native.localeSupported(tag)) return splitExtension(tag);
    }
    throw new RangeError(`Intl: locale ${list.map((t) => `"${t}"`).join(', ')} is not supported (no CLDR data compiled in)`);
  };
  const supportedLocalesOf = (locales) => localeList(locales).filter((tag) => native.localeSupported(tag));
  const withKeywords = (base, keywords) => {
    const keys = Object.keys(keywords).filter((k) => keywords[k] !== undefined).sort();
    if (keys.length === 0) return base;
    return `${base}-u-${keys.map((k) => (keywords[k] === 'true' ? k : `${k}-${keywords[k]}`)).join('-')}`;
  };

  // ---- options ----
  const optionsObject = (options) => (options === undefined ? Object.create(null) : Object(options));
  const getOption = (o, name, allowed, fallback, refused = []) => {
    let value = o[name];
    if (value === undefined) return fallback;
    value = String(value);
    if (refused.includes(value)) throw unsupported(`${name} "${value}"`);
    if (allowed && !allowed.includes(value)) throw new RangeError(`Value ${value} out of range for Intl options property ${name}`);
    return value;
  };
  const getBoolean = (o, name) => (o[name] === undefined ? undefined : Boolean(o[name]));
  const getNumber = (o, name, min, max, fallback) => {
    const value = o[name];
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max) throw new RangeError(`${name} value is out of range.`);
    return Math.floor(n);
  };
  const refuseOptions = (o, names) => {
    for (const [name, accepted] of names) {
      if (o[name] !== undefined && String(o[name]) !== accepted) throw unsupported(`${name} "${String(o[name])}"`);
    }
  };
  // Only the locale's own digits ship, and `latn` everywhere.
  const DIGIT_ZERO = { '\u0660': 'arab', '\u06f0': 'arabext', '\u09e6': 'beng', '\u0966': 'deva', '\u1040': 'mymr' };
  const memo = (compute) => {
    const known = new Map();
    return (key) => {
      if (!known.has(key)) known.set(key, compute(key));
      return known.get(key);
    };
  };
  const numberingSystemOf = memo((locale) => DIGIT_ZERO[native.formatNumber(locale, { style: 'decimal', signDisplay: 'auto', useGrouping: 'auto' }, '0')] || 'latn');
  // The locale's own hour cycle: whether 13:00 prints as 13.
  const hourCycleOf = memo((locale) => (/13/.test(native.formatDate(locale, { hour: 'numeric' }, 'UTC', 13 * 3600e3)) ? 'h23' : 'h12'));
  const checkNumberingSystem = (requested) => {
    if (requested !== undefined && requested !== 'latn') throw unsupported(`numbering system "${requested}"`);
  };

  // formatToParts: the native [type, value] pairs as ECMA-402's objects.
  const toParts = (pairs) => pairs.map(([type, value]) => ({ type, value }));

  // ---- numbers ----
  const ZERO_DIGIT_CURRENCIES = ['BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX',
    'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF'];
  const THREE_DIGIT_CURRENCIES = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'];
  const currencyDigits = (code) => (ZERO_DIGIT_CURRENCIES.includes(code) ? 0 : THREE_DIGIT_CURRENCIES.includes(code) ? 3 : 2);
  // SetNumberFormatDigitOptions (halfExpand, roundingPriority auto).
  const digitOptions = (o, minDefault, maxDefault, compact) => {
    refuseOptions(o, [['roundingMode', 'halfExpand'], ['roundingPriority', 'auto'], ['roundingIncrement', '1'],
      ['trailingZeroDisplay', 'auto']]);
    const d = { minimumIntegerDigits: getNumber(o, 'minimumIntegerDigits', 1, 21, 1) };
    const hasSd = o.minimumSignificantDigits !== undefined || o.maximumSignificantDigits !== undefined;
    const hasFd = o.minimumFractionDigits !== undefined || o.maximumFractionDigits !== undefined;
    if (compact && (hasSd || hasFd || o.minimumIntegerDigits !== undefined)) throw unsupported('digit options with notation "compact"');
    if (compact) return d;
    if (hasSd) {
      d.minimumSignificantDigits = getNumber(o, 'minimumSignificantDigits', 1, 21, 1);
      d.maximumSignificantDigits = getNumber(o, 'maximumSignificantDigits', d.minimumSignificantDigits, 21, 21);
      return d;
    }
    let min = getNumber(o, 'minimumFractionDigits', 0, 100, undefined);
    let max = getNumber(o, 'maximumFractionDigits', 0, 100, undefined);
    if (min === undefined) min = Math.min(minDefault, max === undefined ? minDefault : max);
    else if (max === undefined) max = Math.max(maxDefault, min);
    if (max === undefined) max = Math.max(maxDefault, min);
    if (min > max) throw new RangeError('maximumFractionDigits value is out of range.');
    d.minimumFractionDigits = min;
    d.maximumFractionDigits = max;
    return d;
  };
  // ECMA-402's sanctioned single units; a unit is one of them or `X-per-Y` of two.
  const SANCTIONED_UNITS = ['acre', 'bit', 'byte', 'celsius', 'centimeter', 'day', 'degree', 'fahrenheit',
    'fluid-ounce', 'foot', 'gallon', 'gigabit', 'gigabyte', 'gram', 'hectare', 'hour', 'inch', 'kilobit',
    'kilobyte', 'kilogram', 'kilometer', 'liter', 'megabit', 'megabyte', 'meter', 'microsecond', 'mile',
    'mile-scandinavian', 'milliliter', 'millimeter', 'millisecond', 'minute', 'month', 'nanosecond', 'ounce',
    'percent', 'petabyte', 'pound', 'second', 'stone', 'terabit', 'terabyte', 'week', 'yard', 'year'];
  const unitOption = (o, style) => {
    const unit = o.unit === undefined ? undefined : String(o.unit);
    if (unit !== undefined && !unit.split('-per-').every((u, _, all) => all.length <= 2 && SANCTIONED_UNITS.includes(u))) {
      throw new RangeError(`Invalid unit argument for Intl.NumberFormat() '${unit}'`);
    }
    if (style === 'unit' && unit === undefined) throw new TypeError('Invalid unit argument for Intl.NumberFormat() \'\'');
    return unit;
  };
  // ICU4C formats `percent` and `percent-per-…` (dropping the per unit),
  // short and narrow, with the locale's percent pattern (tr `-%1,5`),
  // unscaled; long, or in compact notation, with the unit's own patterns
  // (tr compact `%-1,2 B`, en `1.2K%/y`).
  const percentPattern = (unit, unitDisplay, notation) => (unit === 'percent' || unit.startsWith('percent-per-'))
    && unitDisplay !== 'long' && notation !== 'compact';
  const EXACT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
  // The value as exact decimal text (a number's shortest round trip, a
  // BigInt's digits, a decimal string as written), or NaN/±Infinity.
  const numericText = (value) => {
    if (typeof value === 'bigint') return String(value);
    if (typeof value === 'string') {
      const text = value.trim();
      if (text === '') return '0';
      if (EXACT.test(text)) return text.replace(/^([+-]?)\./, '$10.').replace(/\.(?=$|[eE])/, '');
    }
    const n = typeof value === 'object' && value !== null && typeof value.valueOf() === 'bigint' ? value.valueOf() : Number(value);
    if (typeof n === 'bigint') return String(n);
    if (Number.isNaN(n)) return 'NaN';
    if (Object.is(n, -0)) return '-0';
    return Number.isFinite(n) ? String(n) : (n < 0 ? '-Infinity' : 'Infinity');
  };
  class NumberFormat {
    #locale; #o; #native;
    constructor(locales, options) {
      const o = optionsObject(options);
      const [base, keywords] = negotiate(locales);
      getOption(o, 'localeMatcher', ['lookup', 'best fit'], 'best fit');
      checkNumberingSystem(o.numberingSystem === undefined ? keywords.nu : String(o.numberingSystem));
      const style = getOption(o, 'style', ['decimal', 'percent', 'currency', 'unit'], 'decimal');
      let currency = o.currency === undefined ? undefined : String(o.currency);
      if (currency !== undefined && !/^[A-Za-z]{3}$/.test(currency)) throw new RangeError(`Invalid currency code : ${currency}`);
      if (currency !== undefined) currency = currency.toUpperCase();
      if (style === 'currency' && currency === undefined) throw new TypeError('Currency code is required with currency style.');
      const currencyDisplay = getOption(o, 'currencyDisplay', ['code', 'symbol', 'narrowSymbol', 'name'], 'symbol');
      const currencySign = getOption(o, 'currencySign', ['standard', 'accounting'], 'standard');
      const unit = unitOption(o, style);
      const unitDisplay = getOption(o, 'unitDisplay', ['short', 'narrow', 'long'], 'short');
      const notation = getOption(o, 'notation', ['standard', 'scientific', 'engineering', 'compact'], 'standard',
        ['scientific', 'engineering']);
      const cDigits = style === 'currency' ? currencyDigits(currency) : 0;
      const [minDefault, maxDefault] = style === 'currency' ? [cDigits, cDigits] : style === 'percent' ? [0, 0] : [0, 3];
      const digits = digitOptions(o, minDefault, maxDefault, notation === 'compact');
      if (style === 'currency' && digits.maximumFractionDigits !== undefined && digits.maximumFractionDigits > cDigits) {
        throw unsupported(`more than ${cDigits} fraction digits for ${currency}`);
      }
      const compactDisplay = getOption(o, 'compactDisplay', ['short', 'long'], 'short');
      let useGrouping = o.useGrouping === undefined ? (notation === 'compact' ? 'min2' : 'auto') : o.useGrouping;
      if (useGrouping === true) useGrouping = 'always';
      else if (useGrouping === false || useGrouping === null || useGrouping === 0 || useGrouping === '') useGrouping = false;
      else if (!['always', 'auto', 'min2'].includes(String(useGrouping))) throw new RangeError(`Value ${useGrouping} out of range for Intl.NumberFormat options property useGrouping`);
      else useGrouping = String(useGrouping);
      if (style === 'currency' && useGrouping !== (notation === 'compact' ? 'min2' : 'auto')) throw unsupported(`useGrouping "${useGrouping}" with style "currency"`);
      const signDisplay = getOption(o, 'signDisplay', ['auto', 'never', 'always', 'exceptZero', 'negative'], 'auto');
      this.#locale = base;
      this.#o = { locale: base, numberingSystem: numberingSystemOf(base), style,
        ...(style === 'currency' ? { currency, currencyDisplay, currencySign } : {}),
        ...(style === 'unit' ? { unit, unitDisplay } : {}),
        ...digits, useGrouping, notation, ...(notation === 'compact' ? { compactDisplay } : {}), signDisplay,
        roundingIncrement: 1, roundingMode: 'halfExpand', roundingPriority: 'auto', trailingZeroDisplay: 'auto' };
      this.#native = { ...this.#o, useGrouping: useGrouping === false ? 'false' : useGrouping, currencyDigits: cDigits,
        ...(style === 'unit' ? { unitPatterns: native.unitPatterns(base, unit, unitDisplay),
          unitPercent: percentPattern(unit, unitDisplay, notation) } : {}) };
    }
    get format() {
      const formatter = (value) => native.formatNumber(this.#locale,
        this.#native, numericText(value));
      define(this, 'format', formatter);
      return formatter;
    }
    formatToParts(value) {
      return toParts(native.formatNumberToParts(this.#locale, this.#native, numericText(value)));
    }
    resolvedOptions() { return { ...this.#o }; }
  }

  // ---- collation ----
  class Collator {
    #handle; #o;
    constructor(locales, options) {
      const o = optionsObject(options);
      const [base, keywords] = negotiate(locales);
      getOption(o, 'localeMatcher', ['lookup', 'best fit'], 'best fit');
      const usage = getOption(o, 'usage', ['sort', 'search'], 'sort', ['search']);
      if (keywords.co !== undefined || o.collation !== undefined) throw unsupported(`collation "${o.collation ?? keywords.co}"`);
      const numeric = getBoolean(o, 'numeric') ?? keywords.kn === 'true';
      const caseFirst = getOption(o, 'caseFirst', ['upper', 'lower', 'false'], keywords.kf ?? 'false');
      const sensitivity = getOption(o, 'sensitivity', ['base', 'accent', 'case', 'variant'], 'variant');
      const ignorePunctuation = getBoolean(o, 'ignorePunctuation') ?? false;
      const locale = withKeywords(base, { kn: numeric ? 'true' : undefined, kf: caseFirst === 'false' ? undefined : caseFirst });
      this.#handle = native.collator(locale, sensitivity, ignorePunctuation);
      this.#o = { locale: base, usage, sensitivity, ignorePunctuation, collation: 'default', numeric, caseFirst };
    }
    get compare() {
      const handle = this.#handle;
      const compare = (a, b) => native.compare(handle, String(a), String(b));
      define(this, 'compare', compare);
      return compare;
    }
    resolvedOptions() { return { ...this.#o }; }
  }

  // ---- plural rules, relative time, lists ----
  class PluralRules {
    #locale; #o;
    constructor(locales, options) {
      const o = optionsObject(options);
      [this.#locale] = negotiate(locales);
      getOption(o, 'localeMatcher', ['lookup', 'best fit'], 'best fit');
      const type = getOption(o, 'type', ['cardinal', 'ordinal'], 'cardinal');
      this.#o = { locale: this.#locale, type, ...digitOptions(o, 0, 3, false) };
    }
    select(value) {
      const text = numericText(Number(value));
      return native.pluralSelect(this.#locale, this.#o.type, this.#o, text);
    }
    resolvedOptions() {
      return { ...this.#o, pluralCategories: native.pluralCategories(this.#locale, this.#o.type) };
    }
  }
  const UNITS = ['second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'];
  class RelativeTimeFormat {
    #locale; #o;
    constructor(locales, options) {
      const o = optionsObject(options);
      const [base, keywords] = negotiate(locales);
      getOption(o, 'localeMatcher', ['lookup', 'best fit'], 'best fit');
      checkNumberingSystem(o.numberingSystem === undefined ? keywords.nu : String(o.numberingSystem));
      const style = getOption(o, 'style', ['long', 'short', 'narrow'], 'long');
      const numeric = getOption(o, 'numeric', ['always', 'auto'], 'always');
      this.#locale = base;
      this.#o = { locale: base, style, numeric, numberingSystem: numberingSystemOf(base) };
    }
    format(value, unit) {
      const n = Number(value);
      if (!Number.isFinite(n)) throw new RangeError(`Invalid number value: ${value}`);
      const name = String(unit);
      const singular = name.endsWith('s') ? name.slice(0, -1) : name;
      if (!UNITS.includes(singular)) throw new RangeError(`Invalid unit argument for format() '${name}'`);
      return native.formatRelative(this.#locale, this.#o.style, this.#o.numeric, singular,
        { minimumIntegerDigits: 1, minimumFractionDigits: 0, maximumFractionDigits: 3 }, numericText(n));
    }
    resolvedOptions() { return { ...this.#o }; }
  }
  class ListFormat {
    #o;
    constructor(locales, options) {
      const o = optionsObject(options);
      const [base] = negotiate(locales);
      getOption(o, 'localeMatcher', ['lookup', 'best fit'], 'best fit');
      this.#o = { locale: base, type: getOption(o, 'type', ['conjunction', 'disjunction', 'unit'], 'conjunction'),
        style: getOption(o, 'style', ['long', 'short', 'narrow'], 'long') };
    }
    format(list) {
      const items = [];
      for (const item of list === undefined ? [] : list) {
        if (typeof item !== 'string') throw new TypeError(`Iterable yielded ${String(item)} which is not a string`);
        items.push(item);
      }
      return native.formatList(this.#o.locale, this.#o.type, this.#o.style, items);
    }
    resolvedOptions() { return { ...this.#o }; }
  }

  // ---- dates (datetime_format.js) ----
  const DateTimeFormat = dateTimeFormat({ native, define, optionsObject, getOption, getBoolean, negotiate, checkNumberingSystem,
    withKeywords, numberingSystemOf, hourCycleOf, unsupported, toParts });

  // Callable with or without `new`, as ECMA-402 constructors are.
  const constructor = (Class, name) => {
    const wrapper = { [name]: function (locales, options) { return new Class(locales, options); } }[name];
    wrapper.prototype = Class.prototype;
    define(Class.prototype, 'constructor', wrapper);
    define(wrapper, 'supportedLocalesOf', supportedLocalesOf);
    Object.defineProperty(Class.prototype, Symbol.toStringTag, { value: `Intl.${name}`, configurable: true });
    return wrapper;
  };
  const Intl = {};
  define(Intl, 'Collator', constructor(Collator, 'Collator'));
  define(Intl, 'NumberFormat', constructor(NumberFormat, 'NumberFormat'));
  define(Intl, 'DateTimeFormat', constructor(DateTimeFormat, 'DateTimeFormat'));
  define(Intl, 'PluralRules', constructor(PluralRules, 'PluralRules'));
  define(Intl, 'RelativeTimeFormat', constructor(RelativeTimeFormat, 'RelativeTimeFormat'));
  define(Intl, 'ListFormat', constructor(ListFormat, 'ListFormat'));
  define(Intl, 'getCanonicalLocales', function getCanonicalLocales(locales) { return localeList(locales); });
  define(Intl, Symbol.toStringTag, 'Intl');
  publish(globalThis, 'Intl', Intl);

  // ---- the locale-sensitive methods of the built-ins ----
  let defaultCollator = null;
  publish(String.prototype, 'localeCompare', function localeCompare(that, locales, options) {
    if (this === undefined || this === null) throw new TypeError('String.prototype.localeCompare called on null or undefined');
    if (locales === undefined && options === undefined) {
      defaultCollator ??= new Collator().compare;
      return defaultCollator(this, that);
    }
    return new Collator(locales, options).compare(this, that);
  });
  publish(Number.prototype, 'toLocaleString', function toLocaleString(locales, options) {
    return new NumberFormat(locales, options).format(Number.prototype.valueOf.call(this));
  });
  publish(BigInt.prototype, 'toLocaleString', function toLocaleString(locales, options) {
    return new NumberFormat(locales, options).format(BigInt.prototype.valueOf.call(this));
  });
  publish(Array.prototype, 'toLocaleString', function toLocaleString(locales, options) {
    const list = Object(this);
    const parts = [];
    for (let i = 0; i < list.length; i++) {
      const item = list[i];
      parts.push(item === undefined || item === null ? '' : String(item.toLocaleString(locales, options)));
    }
    return parts.join(',');
  });
  const localeDate = (required, defaults) => function (locales, options) {
    const time = Date.prototype.getTime.call(this);
    if (Number.isNaN(time)) return 'Invalid Date';
    return new DateTimeFormat(locales, options, required, defaults).format(time);
  };
  publish(Date.prototype, 'toLocaleString', localeDate('any', 'all'));
  publish(Date.prototype, 'toLocaleDateString', localeDate('date', 'date'));
  publish(Date.prototype, 'toLocaleTimeString', localeDate('time', 'time'));
})
