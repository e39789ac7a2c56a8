import { useEffect, useState } from "preact/hooks";
import type { AppView, ClusterView, FleetView } from "../../src/observe/fleet-view.js";
import type { TimelineEvent } from "../../src/observe/timeline.js";

export type { AppView, ClusterView, FleetView, TimelineEvent };

/** What the API adds to an app: its rendered objects per cluster. */
export interface AppDetail extends AppView {
  readonly statusCommit: string | null;
  readonly objects: Readonly<
    Record<
      string,
      readonly { apiVersion: string; kind: string; namespace?: string; name: string; path: string }[]
    >
  >;
}

export interface CommitDetail extends TimelineEvent {
  readonly parent?: string;
  readonly author: string;
  readonly files: readonly { path: string; change: "added" | "modified" | "removed" }[];
}

export interface PlanAnswer {
  readonly base: string;
  readonly head: string;
  readonly notes: readonly string[];
  readonly text: string;
  readonly plan: {
    readonly changed: boolean;
    readonly clusters: readonly {
      cluster: string;
      added: readonly unknown[];
      changed: readonly unknown[];
      removed: readonly unknown[];
    }[];
    readonly distributions: readonly {
      app: string;
      resource: string;
      before?: Record<string, number>;
      after?: Record<string, number>;
    }[];
    /** Workloads left with replicas that fit nowhere (or that fit again): the plan's verdict lines. */
    readonly unplaced?: readonly { unplaced: number; message: string }[];
    readonly unplacedPolicy?: "Warn" | "Fail";
  };
}

/** A GET of the JSON API; an error answer's message is thrown. */
export async function getJson<T>(path: string): Promise<T> {
  const response = await fetch(path, { headers: { accept: "application/json" } });
  const body = (await response.json()) as T & { error?: string };
  if (!response.ok) throw new Error(body.error ?? `${response.status} ${response.statusText}`);
  return body;
}

/** The status commit as the server last announced it; changes whenever the status branch moves. */
export function useStatusCommit(): { commit: string | null; live: boolean } {
  const [state, setState] = useState<{ commit: string | null; live: boolean }>({ commit: null, live: false });
  useEffect(() => {
    const source = new EventSource("/api/events");
    source.addEventListener("status", (event) => {
      const data = JSON.parse((event as MessageEvent<string>).data) as { statusCommit: string | null };
      setState({ commit: data.statusCommit, live: true });
    });
    source.onerror = () => setState((s) => ({ ...s, live: false }));
    return () => source.close();
  }, []);
  return state;
}

/** Loads `path` again whenever `version` changes; keeps the last answer while the next loads. */
export function useApi<T>(path: string | undefined, version: unknown): { data?: T; error?: string } {
  const [state, setState] = useState<{ data?: T; error?: string }>({});
  useEffect(() => {
    if (!path) return;
    let current = true;
    getJson<T>(path).then(
      (data) => current && setState({ data }),
      (error: unknown) =>
        current && setState((s) => ({ ...s, error: String((error as Error).message ?? error) })),
    );
    return () => {
      current = false;
    };
  }, [path, version]);
  return state;
}
