import { Arg, Args, Ctx, FieldResolver, Int, Mutation, Resolver, Root } from 'type-graphql';
import type { GraphQLContext } from '../../graphql/context';
import { PageArgs } from '../../graphql/connection';
import { reportCountByDataset } from '../../graphql/count-loaders';
import { decodeId } from '../../graphql/node';
import { nestedConnection } from '../../graphql/child-connections';
import { annotationsByReport, annotatorsByDataset, reportsPageByDataset, useCaseById } from '../../graphql/node-loaders';
import { Annotation } from '../annotation/annotation.entity';
import { Annotator } from '../annotation/annotator.entity';
import { UseCase } from '../use-case/use-case.entity';
import { CreateDatasetInput, CreateDatasetPayload, ImportReportsInput, ImportReportsPayload } from './dataset.input';
import { Dataset } from './dataset.entity';
import { ReportConnection } from './dataset.types';
import { Report } from './report.entity';

@Resolver(() => Dataset)
export class DatasetResolver {
  @Mutation(() => CreateDatasetPayload)
  async createDataset(@Arg('input') input: CreateDatasetInput, @Ctx() ctx: GraphQLContext): Promise<CreateDatasetPayload> {
    return { dataset: await ctx.services.datasets.create(ctx.principal, decodeId(input.useCaseId, 'UseCase', 'useCaseId'), input) };
  }

  @Mutation(() => ImportReportsPayload, { description: 'All or nothing: a bad row rejects the file with the first 50 reasons.' })
  importReports(@Arg('input') input: ImportReportsInput, @Ctx() ctx: GraphQLContext): Promise<ImportReportsPayload> {
    return ctx.services.datasets.importReports(ctx.principal, decodeId(input.datasetId, 'Dataset', 'datasetId'), input, ctx.inlineFiles, ctx.deadline);
  }

  @FieldResolver(() => UseCase)
  async useCase(@Root() dataset: Dataset, @Ctx() ctx: GraphQLContext): Promise<UseCase | null> {
    return ctx.loaders.get(useCaseById).load(dataset.useCaseId);
  }

  @FieldResolver(() => Int)
  reportCount(@Root() dataset: Dataset, @Ctx() ctx: GraphQLContext): Promise<number> {
    return ctx.loaders.get(reportCountByDataset).load(dataset.id);
  }

  @FieldResolver(() => ReportConnection, { description: 'In import order.' })
  reports(@Root() dataset: Dataset, @Args() page: PageArgs, @Ctx() ctx: GraphQLContext) {
    return nestedConnection(ctx.loaders, reportsPageByDataset, dataset.id, page, () => ctx.services.datasets.reports(dataset.id, page));
  }

  @FieldResolver(() => [Annotator])
  annotators(@Root() dataset: Dataset, @Ctx() ctx: GraphQLContext): Promise<Annotator[]> {
    return ctx.loaders.get(annotatorsByDataset).load(dataset.id);
  }

  @FieldResolver(() => Annotator, { nullable: true, description: 'The annotator models are scored against.' })
  async referenceAnnotator(@Root() dataset: Dataset, @Ctx() ctx: GraphQLContext): Promise<Annotator | null> {
    return (await ctx.loaders.get(annotatorsByDataset).load(dataset.id)).find((a) => a.isReference) ?? null;
  }
}

@Resolver(() => Report)
export class ReportResolver {
  @FieldResolver(() => [Annotation], { description: "Every annotator's values for this report." })
  annotations(@Root() report: Report, @Ctx() ctx: GraphQLContext): Promise<Annotation[]> {
    return ctx.loaders.get(annotationsByReport).load(report.id);
  }
}
