import type { AppView } from "../api.js";
import { Section } from "../components.js";

type Service = NonNullable<AppView["services"]>[number];

/**
 * An app's exported services: per cluster, whether it exports and imports each, and whether traffic
 * goes there (endpoints mode: consumers' EndpointSlices; dns mode: the weighted record), as
 * status/apps/ records them.
 */
export function AppServices({ services }: { services: readonly Service[] }) {
  if (services.length === 0) return null;
  return (
    <Section title="Services">
      {services.map((service) => (
        <div key={service.service} class="service" data-testid={`service-${service.service}`}>
          <p class="diagnosis">{service.summary}</p>
          <div class="scroll">
            <table aria-label={`${service.service}: where it is exported and imported`}>
              <thead>
                <tr>
                  <th>cluster</th>
                  <th>exported</th>
                  <th>imported</th>
                  <th>traffic</th>
                </tr>
              </thead>
              <tbody>
                {clustersOf(service).map((cluster) => (
                  <ServiceRow key={cluster} service={service} cluster={cluster} />
                ))}
              </tbody>
            </table>
          </div>
        </div>
      ))}
    </Section>
  );
}

function ServiceRow({ service, cluster }: { service: Service; cluster: string }) {
  const { text, withdrawn } = traffic(service, cluster);
  return (
    <tr data-cluster={cluster}>
      <td>{cluster}</td>
      <td data-testid={`exported-${cluster}`}>{service.exportedFrom.includes(cluster) ? "yes" : ""}</td>
      <td data-testid={`imported-${cluster}`}>{service.importedIn.includes(cluster) ? "yes" : ""}</td>
      <td data-testid={`traffic-${cluster}`} class={withdrawn ? "short" : ""}>
        {text}
      </td>
    </tr>
  );
}

function clustersOf(service: Service): string[] {
  return [...new Set([...service.exportedFrom, ...service.importedIn])].sort((a, b) => a.localeCompare(b));
}

// Whether a producing cluster gets traffic: in the consumers' endpoints or the DNS record, or withdrawn
// (NotReady, or the app not Healthy there). The mcs mode leaves it to the members' implementation.
function traffic(service: Service, cluster: string): { text: string; withdrawn?: boolean } {
  if (!service.exportedFrom.includes(cluster)) return { text: "" };
  if (service.endpoints)
    return service.endpoints.includes(cluster)
      ? { text: "endpoints" }
      : { text: "withdrawn", withdrawn: true };
  if (service.record)
    return service.record.clusters.includes(cluster)
      ? { text: `DNS ${service.record.name}` }
      : { text: `withdrawn from ${service.record.name}`, withdrawn: true };
  return { text: "by the members' MCS implementation" };
}
