import { useApi } from "./api.js";

/** Who the server says is asking: /api/whoami. */
interface WhoAmI {
  readonly viewer: string;
  readonly via: "token" | "session" | "anonymous" | "open";
  readonly admin: boolean;
  readonly teams: readonly string[];
  readonly signIn: boolean;
}

/**
 * The header's corner: who is signed in and what they see (every app, or their teams'), with a
 * sign-out button; a sign-in link when the server asks who is asking and people can sign in.
 */
export function Who() {
  const who = useApi<WhoAmI>("/api/whoami", null);
  if (who.error)
    return who.error.includes("/auth/login") ? (
      <a class="who" data-testid="sign-in" href="/auth/login">
        Sign in
      </a>
    ) : null;
  const data = who.data;
  if (!data || data.via === "open") return null;
  const sees = data.admin ? "every app" : data.teams.length > 0 ? `team ${data.teams.join(", ")}` : "no team";
  return (
    <div class="who" data-testid="who">
      <span title={`sees ${sees}`}>
        {data.via === "anonymous" ? "anonymous, read-only" : data.viewer} · {sees}
      </span>
      {data.via === "session" ? (
        <form method="post" action="/auth/logout">
          <button type="submit" class="sign-out" data-testid="sign-out">
            Sign out
          </button>
        </form>
      ) : null}
    </div>
  );
}
