import { ConnectionType } from '../../graphql/connection';
import { Endpoint } from './endpoint.entity';
import { Model } from './model.entity';

export const EndpointConnection = ConnectionType(Endpoint, 'Endpoint');
export const ModelConnection = ConnectionType(Model, 'Model');
