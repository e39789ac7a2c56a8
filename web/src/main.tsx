import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { type FleetView, useApi, useStatusCommit } from "./api.js";
import { short } from "./format.js";
import "./styles.css";
import { AppPage } from "./views/app-page.js";
import { CommitPage } from "./views/commit-page.js";
import { MigrationBoard } from "./views/migration-board.js";
import { Overview } from "./views/overview.js";
import { PlanPage } from "./views/plan-page.js";
import { Timeline } from "./views/timeline.js";
import { Who } from "./who.js";

/** The route from the URL's hash: #/, #/apps/web, #/timeline, #/migrations, #/plan?base=…&head=…, #/commits/<id>. */
function useRoute(): { path: string[]; query: URLSearchParams } {
  const read = () => {
    const [path = "", query = ""] = window.location.hash.replace(/^#\/?/, "").split("?");
    return {
      path: path.split("/").filter(Boolean).map(decodeURIComponent),
      query: new URLSearchParams(query),
    };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const changed = () => setRoute(read());
    window.addEventListener("hashchange", changed);
    return () => window.removeEventListener("hashchange", changed);
  }, []);
  return route;
}

const TABS = [
  ["", "Overview"],
  ["timeline", "Timeline"],
  ["migrations", "Migrations"],
  ["plan", "Plan"],
] as const;

function App() {
  const { path, query } = useRoute();
  const { commit, live } = useStatusCommit();
  const fleet = useApi<FleetView>("/api/fleet", commit);
  const [page = ""] = path;
  const source = fleet.data?.source;
  return (
    <>
      <header class="top">
        <a class="brand" href="#/">
          gitfleet
        </a>
        <nav class="tabs">
          {TABS.map(([target, label]) => (
            <a
              key={target}
              href={`#/${target}`}
              class={page === target || (target === "" && page === "apps") ? "tab active" : "tab"}
            >
              {label}
            </a>
          ))}
        </nav>
        <div class="where" data-testid="status-commit">
          <span
            class={live ? "dot live" : "dot"}
            title={live ? "live: updates as the status branch moves" : "reconnecting"}
          />
          status <code>{short(commit)}</code>
          {source?.renderedCommit ? (
            <>
              {" "}
              · source <code>{short(source.sourceCommit)}</code>
              {source.valid ? "" : <span class="badge badge-degraded">invalid</span>}
            </>
          ) : null}
        </div>
        <Who />
      </header>
      <main>{pageFor(page, path, query, fleet, commit)}</main>
    </>
  );
}

function pageFor(
  page: string,
  path: string[],
  query: URLSearchParams,
  fleet: { data?: FleetView; error?: string },
  commit: string | null,
) {
  switch (page) {
    case "apps":
      return <AppPage name={path[1] ?? ""} version={commit} />;
    case "timeline":
      return <Timeline version={commit} kind={query.get("kind") ?? ""} />;
    case "migrations":
      return <MigrationBoard fleet={fleet} />;
    case "plan":
      return <PlanPage base={query.get("base") ?? ""} head={query.get("head") ?? ""} fleet={fleet.data} />;
    case "commits":
      return <CommitPage id={path[1] ?? ""} />;
    default:
      return <Overview fleet={fleet} />;
  }
}

render(<App />, document.getElementById("app") as HTMLElement);
