// Intl.DateTimeFormat over ICU4X (intl/dates.rs; docs/code-mode.md,
// "Intl"): options read and validated, the shape refused where Node prints
// it differently, every string formatted natively. Evaluated before
// intl.js, which calls this function with its helpers and publishes the
// class it returns (split from intl.js to keep each file one concept).
(function dateTimeFormat(helpers) {
  'use strict';
  const { native, define, optionsObject, getOption, getBoolean, negotiate, checkNumberingSystem,
    withKeywords, numberingSystemOf, hourCycleOf, unsupported, toParts } = helpers;
  const DATE_FIELDS = ['weekday', 'year', 'month', 'day'];
  const TIME_FIELDS = ['hour', 'minute', 'second'];
  const FIELD_VALUES = { weekday: ['narrow', 'short', 'long'], year: ['2-digit', 'numeric'],
    month: ['2-digit', 'numeric', 'narrow', 'short', 'long'], day: ['2-digit', 'numeric'],
    hour: ['2-digit', 'numeric'], minute: ['2-digit', 'numeric'], second: ['2-digit', 'numeric'],
    timeZoneName: ['short', 'long', 'shortOffset', 'longOffset', 'shortGeneric', 'longGeneric'] };
  const STYLES = ['full', 'long', 'medium', 'short'];
  // `required`/`defaults` as ToDateTimeOptions: which fields a call fills in.
  function dateTimeOptions(options, required, defaults) {
    const o = optionsObject(options);
    const picked = {};
    for (const name of [...DATE_FIELDS, ...TIME_FIELDS, 'timeZoneName']) {
      picked[name] = getOption(o, name, FIELD_VALUES[name], undefined);
    }
    for (const name of ['era', 'dayPeriod', 'fractionalSecondDigits']) {
      if (o[name] !== undefined) throw unsupported(`the option ${name}`);
    }
    // ICU4X's field sets have one text width for month and weekday, and
    // no narrow one: other combinations would come out differently.
    if (picked.month === 'narrow' || picked.weekday === 'narrow') throw unsupported(`${picked.month === 'narrow' ? 'month' : 'weekday'} "narrow"`);
    const textual = picked.month === 'long' || picked.month === 'short';
    if (picked.weekday && textual && picked.weekday !== picked.month) {
      throw unsupported(`weekday "${picked.weekday}" with month "${picked.month}"`);
    }
    const dateStyle = getOption(o, 'dateStyle', STYLES, undefined);
    const timeStyle = getOption(o, 'timeStyle', STYLES, undefined);
    const fields = [...DATE_FIELDS, ...TIME_FIELDS, 'timeZoneName'].filter((f) => picked[f] !== undefined);
    if ((dateStyle || timeStyle) && fields.length) {
      throw new TypeError(`Can't set option ${fields[0]} when ${dateStyle ? 'dateStyle' : 'timeStyle'} is used`);
    }
    if (required === 'date' && timeStyle && !dateStyle) throw new TypeError('Invalid option : timeStyle');
    if (required === 'time' && dateStyle && !timeStyle) throw new TypeError('Invalid option : dateStyle');
    const wanted = required === 'any' ? [...DATE_FIELDS, ...TIME_FIELDS] : required === 'date' ? DATE_FIELDS : TIME_FIELDS;
    if (!dateStyle && !timeStyle && !wanted.some((f) => picked[f] !== undefined)) {
      const fill = defaults === 'all' ? [...DATE_FIELDS.slice(1), ...TIME_FIELDS] : defaults === 'date' ? DATE_FIELDS.slice(1) : TIME_FIELDS;
      for (const f of fill) picked[f] = 'numeric';
    }
    return { o, picked, dateStyle, timeStyle };
  }
  // The option shape the refusal table (intl/date_refusals.rs) is keyed by:
  // every field, both styles and the hour cycle, as resolvedOptions() has them.
  const SHAPE_KEYS = [...DATE_FIELDS, ...TIME_FIELDS, 'timeZoneName', 'dateStyle', 'timeStyle', 'hourCycle'];
  const timeValue = (date) => {
    const time = date === undefined ? Date.now() : Number(date instanceof Date ? date.getTime() : date);
    if (!Number.isFinite(time) || Math.abs(time) > 8.64e15) throw new RangeError('Invalid time value');
    return time;
  };
  const shapeOf = (resolved) => SHAPE_KEYS.map((key) => `${key}:${resolved[key] ?? '-'}`).join(',');
  class DateTimeFormat {
    #locale; #o; #fields;
    constructor(locales, options, required = 'any', defaults = 'date') {
      const { o, picked, dateStyle, timeStyle } = dateTimeOptions(options, required, defaults);
      const [base, keywords] = negotiate(locales);
      getOption(o, 'localeMatcher', ['lookup', 'best fit'], 'best fit');
      getOption(o, 'formatMatcher', ['basic', 'best fit'], 'best fit');
      const calendar = o.calendar === undefined ? keywords.ca : String(o.calendar);
      if (calendar !== undefined && calendar !== 'gregory') throw unsupported(`calendar "${calendar}"`);
      checkNumberingSystem(o.numberingSystem === undefined ? keywords.nu : String(o.numberingSystem));
      const hour12 = getBoolean(o, 'hour12');
      let hourCycle = getOption(o, 'hourCycle', ['h11', 'h12', 'h23', 'h24'], keywords.hc, ['h11', 'h24']);
      if (hour12 !== undefined) hourCycle = hour12 ? 'h12' : 'h23';
      const timeZone = native.resolveTimeZone(o.timeZone === undefined ? 'UTC' : String(o.timeZone));
      this.#locale = withKeywords(base, { hc: hourCycle });
      this.#fields = { ...picked, dateStyle, timeStyle };
      const hasHour = picked.hour !== undefined || timeStyle !== undefined;
      const shown = Object.fromEntries(Object.entries(picked).filter(([, v]) => v !== undefined));
      this.#o = { locale: base, calendar: 'gregory', numberingSystem: numberingSystemOf(base), timeZone,
        ...(hasHour ? { hourCycle: hourCycle ?? hourCycleOf(base), hour12: (hourCycle ?? hourCycleOf(base)) === 'h12' } : {}),
        ...shown, ...(dateStyle ? { dateStyle } : {}), ...(timeStyle ? { timeStyle } : {}) };
      const shape = shapeOf(this.#o);
      if (native.dateShapeRefused(base, shape)) {
        throw unsupported(`DateTimeFormat with ${shape} in locale "${base}" (Node prints it differently)`);
      }
    }
    get format() {
      const formatter = (date) => native.formatDate(this.#locale, this.#fields, this.#o.timeZone, timeValue(date));
      define(this, 'format', formatter);
      return formatter;
    }
    formatToParts(date) {
      return toParts(native.formatDateToParts(this.#locale, this.#fields, this.#o.timeZone, timeValue(date)));
    }
    resolvedOptions() { return { ...this.#o }; }
  }
  return DateTimeFormat;
})
