import type { ComponentChildren } from "preact";

/** A health or state word with its colour: Healthy green, Progressing blue, Degraded/NotReady red… */
export function Badge({ value, testId }: { value: string; testId?: string }) {
  return (
    <span class={`badge badge-${value.toLowerCase()}`} data-testid={testId}>
      {value}
    </span>
  );
}

/** A labelled bar: `value` of `max`, with the numbers written beside it. */
export function Meter({
  label,
  value,
  max,
  text,
}: {
  label: string;
  value: number;
  max: number;
  text: string;
}) {
  const share = max > 0 ? Math.min(1, value / max) : 0;
  const level = share >= 0.9 ? "high" : share >= 0.7 ? "mid" : "low";
  return (
    <div class="meter" title={`${label}: ${text}`}>
      <span class="meter-label">{label}</span>
      <span class="meter-track" aria-hidden="true">
        <span class={`meter-fill meter-${level}`} style={{ width: `${(share * 100).toFixed(1)}%` }} />
      </span>
      <span class="meter-text">{text}</span>
    </div>
  );
}

export function Section({
  title,
  children,
  aside,
}: {
  title: string;
  children: ComponentChildren;
  aside?: ComponentChildren;
}) {
  return (
    <section class="section">
      <header class="section-head">
        <h2>{title}</h2>
        {aside}
      </header>
      {children}
    </section>
  );
}

export function Problem({ message }: { message: string }) {
  return (
    <p class="problem" role="alert">
      {message}
    </p>
  );
}
